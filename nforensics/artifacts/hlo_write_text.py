"""HLO text for reading, written from an HloModuleProto (the reducer's candidates and its result, beside their .pb).

The text says what nforensics reads of each instruction: its shape with layout, opcode and operands, the
parameter number, `dimensions`, `index`, the window and dim_labels of a convolution, group counts, the
custom-call target and backend_config, the computations it calls, replica groups, source-target pairs, the
channel and the metadata's op_name and source line. Fields nforensics' .proto does not declare (a constant's
literal, dot dimension numbers, slice bounds, comparison directions) are not printed: a constant is written
`constant({...})` and a comment under the header says so. The .pb is the module; this text is its picture, in
the syntax `nforensics hlo` (grammars/hlo/hlo.lark) reads, so the two agree on every fact nforensics computes.
"""

from __future__ import annotations

import json
from typing import Any

from nforensics.artifacts.hlo_models import HloInstruction
from nforensics.artifacts.hlo_proto import message_classes, to_records
from nforensics.artifacts.hlo_values import dim_labels
from nforensics.artifacts.hlo_write import entry_computation

NOTE = ("/* written by nforensics from the .pb beside it, for reading: constants' literals and the attributes "
        "nforensics does not read are left out; the .pb is the module */")
_CALLS = {"fusion": ["calls"], "call": ["to_apply"], "custom-call": ["called_computations"],
          "while": ["body", "condition"], "select-and-scatter": ["select", "scatter"]}


def module_text(module: Any) -> str:
    dtypes = message_classes()["dtypes"]
    names = {c.id: c.name for c in module.computations}
    entry = entry_computation(module)
    program = entry.program_shape
    layout = ", ".join(_shape(s, dtypes) for s in program.parameters)
    lines = [f"HloModule {module.name}, entry_computation_layout={{({layout})->{_shape(program.result, dtypes)}}}",
             NOTE, "", *_frames(module.stack_frame_index)]
    records = to_records(module)
    for computation, record in zip(module.computations, records.computations, strict=True):
        lines.extend(_computation(computation, record.instructions, computation.id == entry.id, names, dtypes))
        lines.append("")
    return "\n".join(lines)


def _frames(index: Any) -> list[str]:
    """The stack-frame index, as XLA prints it between the header and the computations."""
    sections = [
        ("FileNames", [_quote(name) for name in index.file_names]),
        ("FunctionNames", [_quote(name) for name in index.function_names]),
        ("FileLocations", [f"{{file_name_id={f.file_name_id} function_name_id={f.function_name_id} line={f.line}"
                           f" column={f.column}}}" for f in index.file_locations]),
        ("StackFrames", [f"{{file_location_id={f.file_location_id} parent_frame_id={f.parent_frame_id}}}"
                         for f in index.stack_frames]),
    ]
    lines = []
    for title, rows in sections:
        if rows:
            lines.extend([title, *(f"{n} {row}" for n, row in enumerate(rows, 1)), ""])
    return lines


def _computation(computation: Any, records: list[HloInstruction], is_entry: bool, names: dict[int, str],
                 dtypes: dict[int, str]) -> list[str]:
    by_id = {i.id: i.name for i in computation.instructions}
    parameters = sorted((i for i in computation.instructions if i.opcode == "parameter"), key=lambda i: i.parameter_number)
    root = next((i for i in computation.instructions if i.id == computation.root_id), None)
    signature = ", ".join(f"{p.name}: {_shape(p.shape, dtypes, layout=False)}" for p in parameters)
    result = _shape(root.shape, dtypes, layout=False) if root is not None else "()"
    lines = [f"{'ENTRY ' if is_entry else ''}%{computation.name} ({signature}) -> {result} {{"]
    for instruction, record in zip(computation.instructions, records, strict=True):
        mark = "ROOT " if instruction.id == computation.root_id else ""
        lines.append(f"  {mark}%{instruction.name} = {_shape(instruction.shape, dtypes)} {_call(instruction, by_id)}"
                     + "".join(f", {a}" for a in _attributes(instruction, record, names)))
    lines.append("}")
    return lines


def _shape(shape: Any, dtypes: dict[int, str], layout: bool = True) -> str:
    dtype = dtypes.get(shape.element_type, f"type{shape.element_type}")
    if dtype == "tuple":
        return "(" + ", ".join(_shape(s, dtypes, layout) for s in shape.tuple_shapes) + ")"
    dynamic = list(shape.is_dynamic_dimension) or [False] * len(shape.dimensions)
    dims = ",".join(f"<={d}" if bounded else str(d) for d, bounded in zip(shape.dimensions, dynamic, strict=False))
    minor = ",".join(str(d) for d in shape.layout.minor_to_major) if layout and shape.HasField("layout") else ""
    return f"{dtype}[{dims}]" + (f"{{{minor}}}" if minor else "")


def _call(instruction: Any, by_id: dict[int, str]) -> str:
    if instruction.opcode == "parameter":
        return f"parameter({instruction.parameter_number})"
    if instruction.opcode == "constant":
        return "constant({...})"
    return f"{instruction.opcode}(" + ", ".join(f"%{by_id.get(o, o)}" for o in instruction.operand_ids) + ")"


def _attributes(instruction: Any, record: HloInstruction, names: dict[int, str]) -> list[str]:  # noqa: C901
    out = []
    if instruction.opcode == "get-tuple-element":
        out.append(f"index={instruction.tuple_index}")
    if instruction.dimensions:
        out.append("dimensions={" + ",".join(str(d) for d in instruction.dimensions) + "}")
    if instruction.window.dimensions:
        out.append(f"window={{{_window(instruction.window.dimensions)}}}")
    if record.conv_dims is not None:
        out.append(f"dim_labels={dim_labels(record.conv_dims)}")
    for key in ("feature_group_count", "batch_group_count"):
        if getattr(instruction, key) > 1:
            out.append(f"{key}={getattr(instruction, key)}")
    if instruction.custom_call_target:
        out.append(f"custom_call_target={_quote(instruction.custom_call_target)}")
    if instruction.backend_config:
        out.append(f"backend_config={_quote(instruction.backend_config.decode('utf-8', 'replace'))}")
    called = [names.get(c, str(c)) for c in instruction.called_computation_ids]
    if called:
        keys = _CALLS.get(instruction.opcode, ["to_apply"])
        if instruction.opcode == "conditional" or len(keys) < len(called):
            out.append("branch_computations={" + ", ".join(f"%{c}" for c in called) + "}")
        else:
            out.extend(f"{key}=%{name}" for key, name in zip(keys, called, strict=False))
    for key in ("replica_groups", "source_target_pairs"):
        groups = getattr(record, key)
        if groups is not None:
            out.append(f"{key}={{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in groups) + "}")
    if instruction.channel_id:
        out.append(f"channel_id={instruction.channel_id}")
    if instruction.use_global_device_ids:
        out.append("use_global_device_ids=true")
    metadata = _metadata(instruction.metadata)
    if metadata:
        out.append(f"metadata={{{metadata}}}")
    return out


def _window(dimensions: Any) -> str:
    def row(values: list[str], default: str) -> str | None:
        return "x".join(values) if any(v != default for v in values) else None

    parts = {
        "size": "x".join(str(d.size) for d in dimensions),
        "stride": row([str(d.stride or 1) for d in dimensions], "1"),
        "pad": row([f"{d.padding_low}_{d.padding_high}" for d in dimensions], "0_0"),
        "lhs_dilate": row([str(d.base_dilation or 1) for d in dimensions], "1"),
        "rhs_dilate": row([str(d.window_dilation or 1) for d in dimensions], "1"),
        "rhs_reversal": row(["1" if d.window_reversal else "0" for d in dimensions], "0"),
    }
    return " ".join(f"{k}={v}" for k, v in parts.items() if v)


def _metadata(metadata: Any) -> str:
    parts = []
    if metadata.op_type:
        parts.append(f"op_type={_quote(metadata.op_type)}")
    if metadata.op_name:
        parts.append(f"op_name={_quote(metadata.op_name)}")
    if metadata.source_file:
        parts.append(f"source_file={_quote(metadata.source_file)}")
    if metadata.source_line:
        parts.append(f"source_line={metadata.source_line}")
    if metadata.stack_frame_id:
        parts.append(f"stack_frame_id={metadata.stack_frame_id}")
    return " ".join(parts)


def _quote(text: str) -> str:
    """A C-escaped string, as XLA's printer writes one (absl::CEscape; json's escapes are a subset it reads)."""
    return json.dumps(text, ensure_ascii=False)
