"""A serialized HloModuleProto (model.hlo_module.pb) or HloProto -> HloModule records, through protobuf.

The message classes come from nforensics/artifacts/hlo_schema/xla_hlo.proto, compiled into xla_hlo.desc (a
FileDescriptorSet) by tools/build_hlo_descriptor.py and added at run time to a private descriptor pool. No
generated _pb2 module: one from a new protoc refuses an older protobuf runtime, and Neuron environments pin
protobuf themselves; the descriptor works with protobuf 3.20 and later. The private pool keeps these classes
apart from any XLA protos another library (jaxlib, tensorflow) registered in the default pool. Fields the .proto
does not declare are kept by protobuf as unknown fields: `serialize` writes them back unchanged.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from nforensics.artifacts import hlo_values as values
from nforensics.artifacts.hlo_models import (
    ConvDims,
    HloComputation,
    HloFrame,
    HloInstruction,
    HloMetadata,
    HloModule,
    HloShape,
    WindowDim,
)
from nforensics.errors import InputError

DESCRIPTOR = Path(__file__).with_name("hlo_schema") / "xla_hlo.desc"
PACKAGE = "nforensics.xla"
_NAMES = {"OPAQUE_TYPE": "opaque"}  # XLA prints opaque[] for OPAQUE_TYPE; every other type is its lower-case name


@cache
def message_classes() -> dict[str, Any]:
    """The message classes of a module, its computations and instructions, and the HloProto around a module (and
    the PrimitiveType names), from the shipped descriptor."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise InputError("reading an HLO proto needs the protobuf package: pip install protobuf "
                         "(or give the module as text: --xla_dump_hlo_as_text)") from None
    files = descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTOR.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)

    def make(name: str) -> Any:
        descriptor = pool.FindMessageTypeByName(f"{PACKAGE}.{name}")
        if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.21
            return message_factory.GetMessageClass(descriptor)
        return message_factory.MessageFactory(pool).GetPrototype(descriptor)  # protobuf 3.20

    types = pool.FindEnumTypeByName(f"{PACKAGE}.PrimitiveType")
    dtypes = {value.number: _NAMES.get(value.name, value.name.lower()) for value in types.values}
    kinds = ("HloModuleProto", "HloProto", "HloComputationProto", "HloInstructionProto")
    return {**{kind: make(kind) for kind in kinds}, "dtypes": dtypes}


def parse_proto(data: bytes, where: str = "input") -> HloModule:
    """The module a serialized HloModuleProto (or an HloProto around one) describes. Raises InputError for
    bytes that are not one, cut short or not."""
    return to_records(load_message(data, where), where)


def load_message(data: bytes, where: str = "input") -> Any:
    from google.protobuf.message import DecodeError

    classes = message_classes()
    for kind in ("HloModuleProto", "HloProto"):
        try:
            message = classes[kind].FromString(data)
        except (DecodeError, RuntimeError, ValueError):
            continue
        module = message.hlo_module if kind == "HloProto" else message
        if len(module.computations) and all(c.name for c in module.computations):
            return module
    raise InputError(f"{where}: not an HLO module proto (truncated, or another kind of file)")


def to_records(module: Any, where: str = "input") -> HloModule:
    dtypes = message_classes()["dtypes"]
    computation_names = {c.id: c.name for c in module.computations}
    computations = [computation_records(c, computation_names, dtypes, where) for c in module.computations]
    entry = entry_name(module, computation_names, [c.name for c in computations], where)
    for computation in computations:
        computation.is_entry = computation.name == entry
    return HloModule.model_construct(name=module.name, entry=entry, computations=computations,
                                     frames=frame_records(module.stack_frame_index), form="proto")


def computation_records(computation: Any, computation_names: dict[int, str], dtypes: dict[int, str],
                        where: str) -> HloComputation:
    names = {i.id: i.name for i in computation.instructions}
    if computation.root_id not in names or any(o not in names for i in computation.instructions for o in i.operand_ids):
        raise InputError(f"{where}: an HLO proto whose computation {computation.name!r} refers to instructions it "
                         "does not hold (truncated?)")
    instructions = [instruction_record(i, names, computation_names, dtypes, i.id == computation.root_id)
                    for i in computation.instructions]
    return HloComputation.model_construct(name=computation.name, is_entry=False, instructions=instructions)


def entry_name(module: Any, computation_names: dict[int, str], names: list[str], where: str) -> str:
    """The entry computation: by name, else by id (older XLA), else the last one. (`names`: every computation's,
    in order; ids can collide, an unset id is 0 in each.)"""
    entry = module.entry_computation_name or computation_names.get(module.entry_computation_id) or names[-1]
    if entry not in names:
        raise InputError(f"{where}: the HLO proto's entry computation {entry!r} is not among its computations")
    return entry


def instruction_record(proto: Any, names: dict[int, str], computations: dict[int, str], dtypes: dict[int, str],
                 root: bool) -> HloInstruction:
    opcode = proto.opcode
    fields: dict[str, Any] = {
        "name": proto.name, "opcode": opcode, "shape": _shape(proto.shape, dtypes), "is_root": root,
        "operands": [names.get(i, f"#{i}") for i in proto.operand_ids],
        "parameter_number": proto.parameter_number if opcode == "parameter" else None,
        "called": [computations.get(i, f"#{i}") for i in proto.called_computation_ids],
        "window": [_window_dim(d) for d in proto.window.dimensions] or None,
        "conv_dims": _conv_dims(proto.convolution_dimension_numbers) if opcode == "convolution" else None,
        "feature_group_count": proto.feature_group_count or 1, "batch_group_count": proto.batch_group_count or 1,
        "custom_call_target": proto.custom_call_target or None,
        "backend_config": values.decode_bytes(proto.backend_config) or None,
        "replica_groups": _replica_groups(proto), "source_target_pairs": _pairs(proto),
        "channel_id": proto.channel_id or None, "use_global_device_ids": proto.use_global_device_ids,
        "metadata": _metadata(proto.metadata), "attributes": {},
    }
    return HloInstruction.model_construct(**fields)


def _shape(proto: Any, dtypes: dict[int, str]) -> HloShape:
    dtype = dtypes.get(proto.element_type, f"type{proto.element_type}")
    if dtype == "tuple":
        return values.tuple_shape([_shape(s, dtypes) for s in proto.tuple_shapes])
    layout = tuple(proto.layout.minor_to_major) if proto.HasField("layout") else ()
    return _array_shape(dtype, tuple(proto.dimensions), tuple(proto.is_dynamic_dimension), layout)


@lru_cache(maxsize=4096)
def _array_shape(dtype: str, dims: tuple[int, ...], dynamic: tuple[bool, ...], layout: tuple[int, ...]) -> HloShape:
    """Shapes repeat across a module, so each is built once (records are not changed after they are built)."""
    return HloShape.model_construct(dtype=dtype, dims=list(dims), dynamic=list(dynamic) or [False] * len(dims),
                                    layout=list(layout) or None, tuple_shapes=[])


def _window_dim(proto: Any) -> WindowDim:
    return WindowDim.model_construct(size=proto.size, stride=proto.stride or 1, pad_low=proto.padding_low,
                                     pad_high=proto.padding_high, lhs_dilate=proto.base_dilation or 1,
                                     rhs_dilate=proto.window_dilation or 1, reversal=proto.window_reversal)


def _conv_dims(proto: Any) -> ConvDims:
    return ConvDims.model_construct(
        input_batch=proto.input_batch_dimension, input_feature=proto.input_feature_dimension,
        input_spatial=list(proto.input_spatial_dimensions), kernel_input=proto.kernel_input_feature_dimension,
        kernel_output=proto.kernel_output_feature_dimension, kernel_spatial=list(proto.kernel_spatial_dimensions),
        output_batch=proto.output_batch_dimension, output_feature=proto.output_feature_dimension,
        output_spatial=list(proto.output_spatial_dimensions))


def _replica_groups(proto: Any) -> list[list[int]] | None:
    """Newer XLA writes collective_device_list (explicit groups or the iota form) or, newer still, the iota form
    alone (field 92); older XLA writes replica_groups."""
    if proto.HasField("iota_collective_device_list"):
        return _iota(proto.iota_collective_device_list)
    if proto.HasField("collective_device_list"):
        devices = proto.collective_device_list
        if devices.HasField("iota_replica_group_list"):
            return _iota(devices.iota_replica_group_list)
        return [list(group.replica_ids) for group in devices.replica_groups]
    if proto.replica_groups or proto.opcode in _COLLECTIVES:
        return [list(group.replica_ids) for group in proto.replica_groups]
    return None


def _iota(iota: Any) -> list[list[int]]:
    return values.iota_groups(iota.num_replica_groups, iota.num_devices_per_group, list(iota.iota_reshape_dims),
                              list(iota.iota_transpose_perm))


# Collectives whose text always prints replica_groups={...}, empty or not.
_COLLECTIVES = frozenset({"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "all-reduce-start",
                          "all-gather-start", "ragged-all-to-all"})


def _pairs(proto: Any) -> list[list[int]] | None:
    if not proto.source_target_pairs:
        return [] if proto.opcode in ("collective-permute", "collective-permute-start") else None
    return [[pair.source, pair.target] for pair in proto.source_target_pairs]


def _metadata(proto: Any) -> HloMetadata | None:
    return _metadata_of(proto.op_type, proto.op_name, proto.source_file, proto.source_line, proto.stack_frame_id)


@lru_cache(maxsize=4096)
def _metadata_of(op_type: str, op_name: str, source_file: str, source_line: int, frame: int) -> HloMetadata | None:
    if not (op_type or op_name or source_file or source_line or frame):
        return None
    return HloMetadata.model_construct(op_type=op_type or None, op_name=op_name or None, source_file=source_file or None,
                                       source_line=source_line or None, stack_frame_id=frame or None)


def frame_records(index: Any) -> list[HloFrame]:
    files, functions, locations = list(index.file_names), list(index.function_names), list(index.file_locations)

    def at(items: list, one_based: int) -> Any:
        return items[one_based - 1] if 0 < one_based <= len(items) else None

    frames = []
    for frame in index.stack_frames:
        location = at(locations, frame.file_location_id)
        frames.append(HloFrame.model_construct(
            file=at(files, location.file_name_id) if location else None,
            function=at(functions, location.function_name_id) if location else None,
            line=location.line if location else None, column=location.column if location else None,
            parent=frame.parent_frame_id or None))
    return frames
