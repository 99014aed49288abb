"""HLO protos through the protobuf package and nforensics/artifacts/hlo_schema/xla_hlo.proto: the text and the proto
XLA wrote for each fixture give the same records and the same facts; fields the .proto does not declare survive a
parse and re-serialisation; a proto cut short or not a proto at all is one clear InputError.
"""

from __future__ import annotations

import gzip
import importlib.util
import re
import subprocess
import sys

import pytest

from conftest import REPO
from nforensics.artifacts.hlo_facts import hlo_report
from nforensics.artifacts.hlo_proto import DESCRIPTOR, load_message, message_classes, parse_proto
from nforensics.artifacts.hlo_proto_stream import proto_report
from nforensics.artifacts.hlo_text import parse_text
from nforensics.errors import InputError

FIXTURES = REPO / "tests" / "fixtures" / "hlo"
PAIRS = [(text, FIXTURES / text.name.replace(".hlo", ".pb")) for text in sorted(FIXTURES.glob("*.hlo*"))]
PROTO = REPO / "nforensics" / "artifacts" / "hlo_schema" / "xla_hlo.proto"


def data_of(path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def without_text_only(module) -> dict:
    """The records, less what only the text form has (attributes kept as written) and the form itself."""
    dumped = module.model_dump(exclude={"form"})
    for computation in dumped["computations"]:
        for instruction in computation["instructions"]:
            instruction.pop("attributes")
    return dumped


@pytest.mark.parametrize("text, proto", PAIRS, ids=lambda p: p.name)
def test_text_and_proto_give_the_same_records_and_facts(text, proto):
    from_text, from_proto = parse_text(data_of(text).decode()), parse_proto(data_of(proto))
    assert (from_text.form, from_proto.form) == ("text", "proto")
    assert without_text_only(from_text) == without_text_only(from_proto)
    facts_text = hlo_report(from_text, "m").model_dump(exclude={"form"})
    facts_proto = hlo_report(from_proto, "m").model_dump(exclude={"form"})
    assert facts_text == facts_proto
    assert facts_text["instructions"] > 0


def test_the_comparison_sees_a_difference():
    """A near miss: one changed stride in the text is a difference the agreement test would report."""
    text = data_of(FIXTURES / "conv7x7.hlo").decode().replace("stride=2x2", "stride=2x1")
    assert without_text_only(parse_text(text)) != without_text_only(parse_proto(data_of(FIXTURES / "conv7x7.pb")))


# ---------------------------------------------------------------- unknown fields survive


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def wire_fields(data: bytes, descriptor) -> list:
    """A message's fields as (number, payload) sorted by number (stable): declared message fields decoded the same
    way, every other field (unknown ones included) kept as its raw bytes. Serialisers may order fields differently;
    their meaning is this."""
    fields, at = [], 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            start = at
            _, at = _varint(data, at)
            payload = data[start:at]
        elif wire == 2:
            size, at = _varint(data, at)
            payload, at = data[at:at + size], at + size
            field = descriptor.fields_by_number.get(number) if descriptor else None
            if field is not None and field.message_type is not None:
                payload = wire_fields(payload, field.message_type)
        else:
            size = {1: 8, 5: 4}[wire]
            payload, at = data[at:at + size], at + size
        fields.append((number, wire, payload))
    return sorted(fields, key=lambda f: f[0])


@pytest.mark.parametrize("proto", [p for _, p in PAIRS], ids=lambda p: p.name)
def test_unknown_fields_survive_a_round_trip(proto):
    original = data_of(proto)
    message = load_message(original)
    again = message.SerializeToString()
    descriptor = message_classes()["HloModuleProto"].DESCRIPTOR
    assert wire_fields(again, descriptor) == wire_fields(original, descriptor)


def test_the_fixtures_carry_fields_the_proto_does_not_declare():
    """So the round trip above tests something: instructions keep XLA fields nforensics never declared."""
    message = load_message(data_of(FIXTURES / "allreduce.pb"))
    declared = message_classes()["HloModuleProto"].DESCRIPTOR.fields_by_name["computations"].message_type \
        .fields_by_name["instructions"].message_type
    numbers = {number for c in message.computations for i in c.instructions
               for number, _, _ in wire_fields(i.SerializeToString(), declared)}
    assert numbers - set(declared.fields_by_number), "no undeclared field in the fixture"


# ---------------------------------------------------------------- the schema


def test_descriptor_matches_the_proto_file():
    """xla_hlo.desc was compiled from the current xla_hlo.proto: every message's fields, names and numbers."""
    from google.protobuf import descriptor_pb2

    declared: dict[str, dict[int, str]] = {}
    for message, body in re.findall(r"message (\w+) \{(.*?)\n\}", PROTO.read_text(), re.DOTALL):
        inner = re.sub(r"message \w+ \{.*?\n  \}", "", body, flags=re.DOTALL)
        declared[message] = {int(n): name for name, n in re.findall(r"^\s+(?:repeated )?[\w.]+ (\w+) = (\d+);", inner, re.M)}
    assert len(declared) >= 15 and all(declared.values())
    files = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTOR.read_bytes())
    compiled = {m.name: {f.number: f.name for f in m.field} for m in files.file[0].message_type}
    assert compiled == declared


@pytest.mark.skipif(importlib.util.find_spec("grpc_tools") is None, reason="protoc (grpcio-tools) is not installed")
def test_descriptor_is_what_protoc_makes():
    result = subprocess.run([sys.executable, str(REPO / "tools/build_hlo_descriptor.py"), "--check"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- bad bytes


def test_every_cut_of_a_proto_is_an_error_or_loses_only_trailing_fields():
    data = data_of(FIXTURES / "conv7x7_grad.pb")
    whole = without_text_only(parse_proto(data))
    errors = 0
    for cut in range(1, len(data)):
        try:
            module = parse_proto(data[:cut], "cut.pb")
        except InputError as error:
            assert "cut.pb:" in str(error)
            errors += 1
            continue
        assert without_text_only(module)["computations"] == whole["computations"]  # only trailing fields were lost
    assert errors > 0.9 * len(data)


@pytest.mark.parametrize("data", [b"\x00\x01\x02\x03garbage\xff", b"\x0a\x05hello", b"\xff" * 64, b"\x08\x96\x01"],
                         ids=["garbage", "a name only", "all ones", "a number"])
@pytest.mark.parametrize("read", [parse_proto, proto_report], ids=["records", "stream"])
def test_bytes_that_are_not_a_module(data, read):
    with pytest.raises(InputError, match="bad.pb: not an HLO module proto"):
        read(data, "bad.pb")


def test_an_hlo_proto_wrapper_is_read_too():
    """--xla_dump_hlo_as_proto writes HloProto: the module in field 1 (buffer assignment after it)."""
    module = data_of(FIXTURES / "conv7x7.pb")
    wrapped = b"\x0a" + _encode_varint(len(module)) + module + b"\x1a\x02\x08\x01"  # field 3: a buffer assignment
    assert without_text_only(parse_proto(wrapped)) == without_text_only(parse_proto(module))
    assert proto_report(wrapped, "m") == proto_report(module, "m")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


# ---------------------------------------------------------------- facts gathered as the proto is decoded


PROTOS = sorted(FIXTURES.glob("*.pb*"))


@pytest.mark.parametrize("proto", PROTOS, ids=lambda p: p.name)
def test_facts_gathered_while_decoding_equal_the_facts_of_the_records(proto):
    data = data_of(proto)
    asked = ["dot", "convolution", "custom-call"]
    assert proto_report(data, "m", asked) == hlo_report(parse_proto(data), "m", asked)


def test_a_convert_before_its_operand_still_finds_its_source_type():
    """The stream resolves a convert's source by id over the whole computation, not from what came before."""
    module = load_message(data_of(FIXTURES / "bf16_islands.pb"))
    for computation in module.computations:
        reordered = list(reversed(computation.instructions))
        del computation.instructions[:]
        computation.instructions.extend(reordered)
    data = module.SerializeToString()
    streamed = proto_report(data, "m")
    assert streamed.dtypes.converts == hlo_report(parse_proto(data), "m").dtypes.converts
    assert "?" not in "".join(streamed.dtypes.converts)


def test_every_cut_is_read_alike_by_the_stream_and_the_records():
    data = data_of(FIXTURES / "conv7x7_grad.pb") + data_of(FIXTURES / "custom_kernel_twice.pb")  # two modules' fields
    for cut in range(1, len(data), 7):
        outcomes = []
        for read in (lambda d: proto_report(d, "cut.pb"), lambda d: hlo_report(parse_proto(d, "cut.pb"), "cut.pb")):
            try:
                outcomes.append(read(data[:cut]))
            except InputError as error:
                outcomes.append(str(error).split(": ", 1)[0])
        assert outcomes[0] == outcomes[1], cut


def test_an_operand_the_computation_does_not_hold_is_refused_by_both_readers():
    module = load_message(data_of(FIXTURES / "bf16_islands.pb"))
    last = module.computations[-1].instructions[-1]
    last.operand_ids[0] = 987654321
    data = module.SerializeToString()
    for read in (parse_proto, proto_report):
        with pytest.raises(InputError, match="refers to instructions it does not hold"):
            read(data, "dangling.pb")


def test_computations_without_ids_are_still_found_by_name():
    """Ids are optional in the proto (all 0 when unset): the entry is found by its name among all of them."""
    module = load_message(data_of(FIXTURES / "allreduce.pb"))
    for computation in module.computations:
        computation.id = 0
    data = module.SerializeToString()
    assert parse_proto(data).entry == proto_report(data, "m").entry == module.entry_computation_name


def test_ids_far_apart_are_held_in_a_set_not_a_bitmap_of_the_span():
    from array import array

    from nforensics.artifacts.hlo_proto_stream import _HeldIds

    sparse, dense = _HeldIds(array("q", [0, (1 << 28) - 1])), _HeldIds(array("q", range(5, 900)))
    assert sparse.bits is None and sparse((1 << 28) - 1) and not sparse(1)
    assert dense.bits is not None and dense(5) and dense(899) and not dense(4) and not dense(900)
