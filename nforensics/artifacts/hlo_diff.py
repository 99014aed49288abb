"""What changed between two HLO modules (`nforensics hlo diff A B`): their facts side by side, key by key.

Each module's facts (nforensics/artifacts/hlo_facts.py) are flattened into counts and values under dotted keys:
op counts, element types and converts, custom-call kernels, convolutions by their shape of window (so a 7x7
stride-2 forward convolution that gained an input gradient shows as one new key), collectives by opcode and
replica groups, the HBM estimate and dynamic shapes. Names of instructions are left out on purpose: two lowerings
of one model number their instructions differently, and a diff of names would be all noise.
"""

from __future__ import annotations

from collections import Counter

from nforensics.artifacts.hlo_models import HloChange, HloDiff, HloReport

Scalar = int | float | str | bool


def flat_facts(report: HloReport) -> dict[str, Scalar]:
    facts: dict[str, Scalar] = {"module": report.module, "computations": report.computations,
                                "instructions": report.instructions}
    facts.update({f"ops.{opcode}": n for opcode, n in report.ops.items()})
    facts.update({f"dtypes.compute.{dtype}": n for dtype, n in report.dtypes.compute.items()})
    facts.update({f"dtypes.converts.{change}": n for change, n in report.dtypes.converts.items()})
    facts["dtypes.mixed_bf16_f32"] = report.dtypes.mixed_bf16_f32
    for call in report.custom_calls:
        facts[f"custom_calls.{call.target}.calls"] = call.calls
        facts.update({f"custom_calls.{call.target}.kernels.{name}": n for name, n in call.kernels.items()})
    shapes = Counter(
        f"window={c.window} stride={c.stride} pad={c.padding} dilation={c.lhs_dilate}/{c.rhs_dilate} "
        f"groups={c.feature_group_count} role={c.backward or 'forward'}" for c in report.convolutions)
    facts.update({f"convolutions.{shape}": n for shape, n in shapes.items()})
    collectives = Counter(f"{c.opcode} {_groups(c.replica_groups, c.source_target_pairs)}" for c in report.collectives)
    facts.update({f"collectives.{what}": n for what, n in collectives.items()})
    memory = report.memory
    facts.update({"memory.parameter_bytes": memory.parameter_bytes, "memory.output_bytes": memory.output_bytes,
                  "memory.estimate_bytes": memory.estimate_bytes, "memory.largest_bytes": memory.largest_bytes,
                  "dynamic.instructions": len(report.dynamic)})
    return facts


def _groups(groups: list[list[int]] | None, pairs: list[list[int]] | None) -> str:
    chosen = groups if groups is not None else pairs
    return "-" if chosen is None else "{" + ",".join("{" + ",".join(map(str, g)) + "}" for g in chosen) + "}"


def diff_reports(a: HloReport, b: HloReport) -> HloDiff:
    first, second = flat_facts(a), flat_facts(b)
    keys = list(first) + [key for key in second if key not in first]
    changes = [HloChange.model_construct(key=key, a=first.get(key), b=second.get(key))
               for key in keys if first.get(key) != second.get(key)]
    return HloDiff.model_construct(a=a.path, b=b.path, changes=changes)
