"""Typed records of the facts the mission names: what a barrier mismatch, a tensor-copy partition error, the
activation-table limit, a DGE out-of-bounds access and a compiler crash are made of, with validated types.

A signature (or family) names the record its fields build (`record = "barrier_mismatch"`); the finding carries
the record beside its `fields` (kept for compatibility: JSON schema 1.3). Each record has a `kind`, so JSON
readers and pydantic tell them apart without guessing.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union, cast, get_args

from pydantic import BaseModel, ConfigDict, Field

from nforensics.defaults import new_list


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
    frames: list[str] = Field(default_factory=new_list)  # deepest last: `path:function`
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


# ---------------------------------------------------------------- HLO facts (explain --hlo, evidence kind `hlo`)

# The named facts an HLO module gives the hypotheses (evidence rules with `hlo = NAME`), each with what it
# counts. A fact is a list of observations: one per module read for a module-wide number, one per kernel or per
# convolution for the others; a rule holds when one observation satisfies it (a graph, not the sum of graphs).
HLO_FACTS: dict[str, str] = {
    "instructions": "instructions in the module",
    "custom_calls": "custom-call instructions, whatever their target",
    "kernel_calls": "per kernel: how many times one graph launches it (custom-calls whose target launches a kernel, "
                    "such as AwsNeuronCustomNativeKernel)",
    "bf16_ops": "arithmetic instructions that compute in bf16",
    "bf16_share": "the share (0-1) of arithmetic instructions that compute in bf16",
    "bf16_f32_converts": "convert instructions between bf16 and f32, either way (f32 islands in a bf16 graph)",
    "activation_ops": "transcendental instructions (tanh, exponential, logistic, log, erf, rsqrt, ...): what the "
                      "activation engine evaluates from lookup tables",
    "activation_kinds": "how many distinct transcendental opcodes the module uses",
    "conv_window": "per convolution: its window, e.g. 7x7",
    "gradient_conv_kernel": "per convolution that is an input or filter gradient: the kernel size of the forward "
                            "convolution it differentiates, e.g. 7x7 (decided from the graph's structure)",
    "collectives": "collective instructions (all-reduce, all-gather, reduce-scatter, collective-permute, ...)",
    "dynamic_shapes": "instructions with a bounded dynamic dimension",
    "hbm_estimate_bytes": "parameter + output bytes of the entry computation: the least the device must hold",
}
HloFactName = Literal["instructions", "custom_calls", "kernel_calls", "bf16_ops", "bf16_share", "bf16_f32_converts",
                      "activation_ops", "activation_kinds", "conv_window", "gradient_conv_kernel", "collectives",
                      "dynamic_shapes", "hbm_estimate_bytes"]
assert set(get_args(HloFactName)) == set(HLO_FACTS), "HloFactName must name every HLO fact"
HLO_FACT_PREFIX = "hlo."  # the key of a named HLO fact among the artifact facts: hlo.kernel_calls


class HloObservation(BaseModel):
    """One observation of a named HLO fact: its value, what it means in words, and the module it was read from."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    value: int | float | str | bool
    detail: str  # what a user reads: "the HLO calls kernel sendrecv_kernel 2 times"
    module: str  # the file it was read from
