"""An HLO module's facts as hypotheses read them (evidence rules with `hlo = NAME`, explain --hlo).

Each named fact of nforensics/fact_records.py HLO_FACTS becomes a list of observations: a value with a sentence
that says what it is in this module ("the HLO calls kernel sendrecv_kernel 2 times"), so the evidence a rule
earns is the module's own fact in words, and the file it came from.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from nforensics.artifacts.hlo_facts import COLLECTIVES
from nforensics.artifacts.hlo_models import ConvFacts, CustomCallFacts, HloReport
from nforensics.fact_records import HLO_FACT_PREFIX, HLO_FACTS, HloObservation

Observations = dict[str, list[HloObservation]]

# Opcodes the activation engine evaluates through lookup tables (XLA's transcendental elementwise ops).
TRANSCENDENTAL = frozenset({"tanh", "exponential", "exponential-minus-one", "logistic", "log", "log-plus-one", "erf",
                            "rsqrt", "sqrt", "cbrt", "power", "sine", "cosine", "tan", "atan2"})
# Custom-call targets that launch a kernel (an NKI kernel through torch-neuronx or jax): not the fixed-function
# Neuron custom-calls (AwsNeuronRmsNorm, TopK, ...) that a model uses once per layer by design.
_KERNEL_TARGET = re.compile(r"(?i)kernel|nki")
_EXAMPLES = 3


def observations(report: HloReport) -> Observations:
    """Every named HLO fact of one module (`report` is `nforensics hlo`'s), keyed `hlo.NAME`."""
    module = report.path
    name = Path(module).name

    def one(value: int | float | str | bool, detail: str) -> list[HloObservation]:
        return [HloObservation.model_construct(value=value, detail=detail, module=module)]

    compute = report.dtypes.compute
    arithmetic = sum(compute.values())
    bf16 = compute.get("bf16", 0)
    activations = Counter({op: report.ops[op] for op in TRANSCENDENTAL if report.ops.get(op)})
    collectives = sum(n for op, n in report.ops.items() if op in COLLECTIVES)
    facts: Observations = {
        "instructions": one(report.instructions, f"{name} holds {report.instructions} instructions"),
        "custom_calls": one(sum(c.calls for c in report.custom_calls), _custom_calls_text(report.custom_calls)),
        "kernel_calls": [o for c in report.custom_calls if _KERNEL_TARGET.search(c.target) for o in _kernels(c, module)],
        "bf16_ops": one(bf16, f"{bf16} of the {arithmetic} arithmetic instructions in the HLO compute in bf16"
                              + _others(compute)),
        "bf16_share": one(round(bf16 / arithmetic, 3) if arithmetic else 0.0,
                          f"{bf16 / arithmetic:.0%} of the HLO's arithmetic computes in bf16" if arithmetic
                          else "the HLO computes no arithmetic"),
        "bf16_f32_converts": one(*_converts(report)),
        "activation_ops": one(sum(activations.values()), _activations_text(activations)),
        "activation_kinds": one(len(activations), f"the HLO uses {len(activations)} distinct transcendental ops"
                                + (f" ({', '.join(sorted(activations))})" if activations else "")),
        "conv_window": [HloObservation.model_construct(
            value=c.window, detail=f"{c.name} is a {c.window} convolution (stride {c.stride}){_where(c)}", module=module)
            for c in report.convolutions],
        "gradient_conv_kernel": _gradients(report, module),
        "collectives": one(collectives, f"the HLO holds {collectives} collective instructions"),
        "dynamic_shapes": one(len(report.dynamic), f"{len(report.dynamic)} instructions of the HLO have a dynamic shape"
                              + (f", e.g. {report.dynamic[0].name} {report.dynamic[0].shape}" if report.dynamic else "")),
        "hbm_estimate_bytes": one(report.memory.estimate_bytes,
                                  f"the HLO's parameters and outputs take {_bytes(report.memory.estimate_bytes)}"),
    }
    assert set(facts) == set(HLO_FACTS), "every named HLO fact is observed"
    return {HLO_FACT_PREFIX + key: value for key, value in facts.items()}


def merge(many: list[Observations]) -> Observations:
    """The facts of several modules: each fact's observations side by side (a rule holds on any one graph)."""
    merged: Observations = {}
    for facts in many:
        for key, found in facts.items():
            merged.setdefault(key, []).extend(found)
    return merged


def digest(facts: Observations) -> list[str]:
    """The sentences worth showing beside a cache entry: the facts that are there (not the zeros)."""
    shown = ("instructions", "custom_calls", "kernel_calls", "bf16_ops", "bf16_f32_converts", "activation_ops",
             "gradient_conv_kernel", "collectives", "dynamic_shapes", "hbm_estimate_bytes")
    lines = []
    for key in shown:
        found = [o for o in facts.get(HLO_FACT_PREFIX + key, []) if o.value]
        lines += [o.detail for o in found[:_EXAMPLES]]
    return lines


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def _where(conv: ConvFacts) -> str:
    return f" at {conv.source}" if conv.source else ""


def _others(compute: dict[str, int]) -> str:
    others = [f"{dtype}: {count}" for dtype, count in compute.items() if dtype != "bf16"]
    return f" ({', '.join(others[:3])})" if others else ""


def _custom_calls_text(calls: list[CustomCallFacts]) -> str:
    total = sum(c.calls for c in calls)
    if not total:
        return "the HLO has no custom-calls"
    return f"the HLO has {total} custom-calls: " + ", ".join(f"{c.target} x{c.calls}" for c in calls[:_EXAMPLES])


def _kernels(call: CustomCallFacts, module: str) -> list[HloObservation]:
    return [HloObservation.model_construct(
        value=count, module=module,
        detail=f"the HLO calls kernel {kernel} {count} time{'s' if count != 1 else ''} (custom-call {call.target})")
        for kernel, count in call.kernels.items()]


def _converts(report: HloReport) -> tuple[int, str]:
    converts = report.dtypes.converts
    up, down = converts.get("bf16->f32", 0), converts.get("f32->bf16", 0)
    if not up + down:
        return 0, "the HLO converts nothing between bf16 and f32"
    site = report.dtypes.sites[0] if report.dtypes.sites else None
    example = f", e.g. {site.name}" + (f" ({site.op_name})" if site and site.op_name else "") if site else ""
    return up + down, (f"the HLO converts between bf16 and f32 {up + down} times ({up} bf16->f32, {down} f32->bf16): "
                       f"f32 islands in a bf16 graph{example}")


def _activations_text(activations: Counter[str]) -> str:
    total = sum(activations.values())
    if not total:
        return "the HLO evaluates no transcendental (activation-table) ops"
    kinds = ", ".join(f"{op} x{n}" for op, n in activations.most_common(4))
    return f"the HLO evaluates {total} transcendental (activation-table) ops: {kinds}"


def _forward_kernel(conv: ConvFacts) -> str | None:
    """The kernel size of the convolution `conv` differentiates: an input gradient's window is that kernel
    (reversed); a filter gradient's output is that kernel, so its spatial dimensions are the size."""
    if conv.backward == "input":
        return conv.window
    if conv.backward != "filter" or "->" not in conv.dim_labels:
        return None
    labels = conv.dim_labels.split("->", 1)[1]
    inside = conv.shape.partition("[")[2].partition("]")[0]  # f32[8,3,7,7] -> 8,3,7,7
    dims = [d.strip().removeprefix("<=") for d in inside.split(",")] if inside else []
    spatial = sorted((label, i) for i, label in enumerate(labels) if label.isdigit())
    if len(dims) != len(labels) or not spatial:
        return None
    return "x".join(dims[i] for _, i in spatial)


def _gradients(report: HloReport, module: str) -> list[HloObservation]:
    by_name = {c.name: c for c in report.convolutions}
    found = []
    for conv in report.convolutions:
        kernel = _forward_kernel(conv)
        if kernel is None:
            continue
        forward = by_name.get(conv.backward_of or "")
        of = f" ({forward.name}, stride {forward.stride})" if forward else ""
        found.append(HloObservation.model_construct(
            value=kernel, module=module,
            detail=f"{conv.name} is the {conv.backward} gradient of a {kernel} convolution{of}{_where(conv)}"))
    return found
