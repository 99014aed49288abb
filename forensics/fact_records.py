"""Typed records of the facts the mission names: what a barrier mismatch, a tensor-copy partition error, the
activation-table limit, a DGE out-of-bounds access and a compiler crash are made of, with validated types.

A signature (or family) names the record its fields build (`record = "barrier_mismatch"`); the finding carries
the record beside its `fields` (kept for compatibility: JSON schema 1.3). Each record has a `kind`, so JSON
readers and pydantic tell them apart without guessing.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union, cast, get_args

from pydantic import BaseModel, ConfigDict, Field


class _Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class BarrierMismatch(_Fact):
    """NCC_IXLV002: the two logical cores of an LNC2 program reach a barrier under different names."""

    kind: Literal["barrier_mismatch"] = "barrier_mismatch"
    expected_barrier: str
    actual_barrier: str
    barrier_index: int | None = None
    subgraph: int | None = None
    core: int | None = None


class TensorCopyPartitions(_Fact):
    """A tensorizer pass refused a tensor copy whose start partitions are not aligned to the partition bank."""

    kind: Literal["tensor_copy_partitions"] = "tensor_copy_partitions"
    pass_name: str | None = None
    src_start_partition: str | None = None  # a number, or a loop variable such as i_3
    dst_start_partition: str | None = None
    partitions_per_bank: int | None = None
    tensor_dtype: str | None = None
    tensor_shape: str | None = None
    kernel_name: str | None = None


class ActivationTableLimit(_Fact):
    """One LoadActFuncSet instruction asked for more activation tables than the hardware holds."""

    kind: Literal["activation_table_limit"] = "activation_table_limit"
    instruction: str | None = None
    max_tables: int
    tensor_dtype: str | None = None
    tensor_shape: str | None = None
    source_file: str | None = None
    source_line: int | None = None


class DgeOutOfBounds(_Fact):
    """A scatter/gather by the descriptor-generation engine addressed memory outside its tensor."""

    kind: Literal["dge_out_of_bounds"] = "dge_out_of_bounds"
    dge_kind: Literal["hardware", "scalar", "vector"] | None = None
    status: int | None = None
    instruction_line: int | None = None


class CompilerCrash(_Fact):
    """The compiler failed inside itself: where (stage, the module of its deepest frame) and which version."""

    kind: Literal["compiler_crash"] = "compiler_crash"
    stage: str | None = None
    crash_component: str | None = None
    error_class: str | None = None
    frames: list[str] = Field(default_factory=list)  # deepest last: `path:function`
    compiler_version: str | None = None


AnyFact = Union[BarrierMismatch, TensorCopyPartitions, ActivationTableLimit, DgeOutOfBounds, CompilerCrash]
FactRecord = Annotated[AnyFact, Field(discriminator="kind")]
RECORD_KINDS: dict[str, type[_Fact]] = {
    model.model_fields["kind"].default: model
    for model in (BarrierMismatch, TensorCopyPartitions, ActivationTableLimit, DgeOutOfBounds, CompilerCrash)
}
RecordKind = Literal["barrier_mismatch", "tensor_copy_partitions", "activation_table_limit", "dge_out_of_bounds",
                     "compiler_crash"]
assert set(get_args(RecordKind)) == set(RECORD_KINDS), "RecordKind must name every record model's kind"


def build_record(kind: str, values: dict[str, object]) -> AnyFact | None:
    """The record of `kind` from a finding's values (those it does not declare are ignored); None when the
    values do not make a valid record (a required fact missing from this instance's message)."""
    model = RECORD_KINDS[kind]
    known = {k: v for k, v in values.items() if k in model.model_fields and k != "kind" and v is not None}
    try:
        return cast(AnyFact, model.model_validate(known))
    except ValueError:
        return None
