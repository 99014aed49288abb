"""The typed facts the mission names: each of the four seed-class signatures and the compiler-crash family
gives its finding a typed record (JSON `record`, schema 1.3) with the values its message printed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from conftest import SAMPLE_LOGS
from nforensics.knowledge import builtin_kb
from nforensics.knowledge.schema import Signature
from nforensics.pipeline import analyze_path, analyze_text

KB = builtin_kb()


@pytest.mark.parametrize("log,kind,values", [
    ("seed000_ncc_ixlv002_sendrecv_twice.log", "barrier_mismatch",
     {"expected_barrier": "LocalSendRecv-0_476_sr_cb_begin", "actual_barrier": "LocalSendRecv-0_176_sr_cb_begin",
      "barrier_index": 6, "subgraph": 0, "core": 1}),
    ("seed001_nrt_exec_oob_vector_dge_nxdi.log", "dge_out_of_bounds", {"dge_kind": "vector", "status": 1006}),
    ("seed003_ncc_inla001_xla_use_bf16.log", "activation_table_limit",
     {"instruction": "LoadActFuncSet", "max_tables": 8, "tensor_dtype": "bfloat16", "source_line": 296}),
    ("seed004_ncc_iten404_conv7x7_backward_trn1.log", "tensor_copy_partitions", {"partitions_per_bank": 32}),
])
def test_a_seed_finding_carries_its_typed_record(log, kind, values):
    record = analyze_path(str(SAMPLE_LOGS / log)).findings[0].record
    assert record is not None and record.kind == kind
    for name, value in values.items():
        assert getattr(record, name) == value


def test_a_compiler_crash_family_finding_records_where_and_which_version():
    text = ("neuronx-cc 2.15.128.0\n"
            "Traceback (most recent call last):\n"
            '  File "neuronxcc/driver/CommandDriver.py", line 343, in run\n'
            '  File "neuronxcc/starfish/penguin/Frontend.py", line 88, in lower\n'
            "AssertionError: unexpected layout in pass Foo\n"
            "2025-03-01T10:00:01Z ERROR 4242 [neuronx-cc]: An Internal Compiler Error has occurred\n")
    crash = [f for f in analyze_text(text).findings if f.family == "compiler-internal-crash"]
    assert crash and crash[0].record is not None and crash[0].record.kind == "compiler_crash"
    assert crash[0].record.frames[-1] == "neuronxcc/starfish/penguin/Frontend.py:lower"


def test_a_signature_cannot_declare_fields_its_record_does_not_have():
    data = {**KB.get("ncc-ixlv002-core-barrier-name-mismatch").model_dump(exclude_defaults=True)}
    data["fields"] = {**data["fields"], "queue_name": "str"}
    with pytest.raises(ValidationError, match="not fields of record 'barrier_mismatch'"):
        Signature.model_validate(data)


def test_a_value_of_the_wrong_type_leaves_no_record_rather_than_a_wrong_one():
    from nforensics.fact_records import build_record

    assert build_record("dge_out_of_bounds", {"dge_kind": "quantum"}) is None
    assert build_record("activation_table_limit", {"instruction": "LoadActFuncSet"}) is None  # max_tables missing
