"""The records of an HLO module, read from text (grammars/hlo/hlo.lark) or from a serialized HloModuleProto.

Types only. Both readers build exactly these records, so every fact computed from them is the same whichever
form the module came in (tests/test_hlo_agree.py checks it for every fixture). Field names are part of the
JSON output of `nforensics hlo --format json`: add, never rename. Sizes are bytes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from nforensics.defaults import new_dict, new_list
from nforensics.records import Record


class HloShape(Record):
    """f32[8,3,32,32]{3,2,1,0}: element type, dimensions (a bound for a dynamic one), layout; or a tuple."""

    dtype: str  # XLA's lower-case name: f32, bf16, pred, s32, f8e4m3fn, ...; tuple, token, opaque
    dims: list[int] = Field(default_factory=new_list)
    dynamic: list[bool] = Field(default_factory=new_list)  # per dimension; f32[<=8,4] -> [True, False]
    layout: list[int] | None = None  # minor-to-major; None when not given (or a scalar's empty one)
    tuple_shapes: list[HloShape] = Field(default_factory=new_list)


class WindowDim(Record):
    """One dimension of window={size=7x7 stride=2x2 pad=3_3x3_3 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}."""

    size: int
    stride: int = 1
    pad_low: int = 0
    pad_high: int = 0
    lhs_dilate: int = 1  # base dilation: a transposed (input-gradient) convolution of a strided one
    rhs_dilate: int = 1  # window dilation
    reversal: bool = False


class ConvDims(Record):
    """ConvolutionDimensionNumbers; in text, dim_labels=bf01_oi01->bf01 (b batch, f feature, i/o kernel
    input/output feature, digits the spatial dimensions in order)."""

    input_batch: int
    input_feature: int
    input_spatial: list[int]
    kernel_input: int
    kernel_output: int
    kernel_spatial: list[int]
    output_batch: int
    output_feature: int
    output_spatial: list[int]


class HloMetadata(Record):
    op_type: str | None = None
    op_name: str | None = None
    source_file: str | None = None
    source_line: int | None = None
    stack_frame_id: int | None = None  # into HloModule.frames (1-based, as XLA numbers them)


class HloFrame(Record):
    """One entry of the module's stack-frame index (newer XLA): where the framework created an op."""

    file: str | None = None
    function: str | None = None
    line: int | None = None
    column: int | None = None
    parent: int | None = None  # 1-based frame id of the caller


class HloInstruction(Record):
    name: str  # without the text form's leading %
    opcode: str
    shape: HloShape
    operands: list[str] = Field(default_factory=new_list)  # names; a constant's literal is not an operand
    is_root: bool = False
    parameter_number: int | None = None
    called: list[str] = Field(default_factory=new_list)  # to_apply=, calls=, condition=, body=, branch_computations=
    window: list[WindowDim] | None = None
    conv_dims: ConvDims | None = None
    feature_group_count: int = 1
    batch_group_count: int = 1
    custom_call_target: str | None = None
    backend_config: str | None = None
    replica_groups: list[list[int]] | None = None  # the iota form [2,2]<=[4] is expanded
    source_target_pairs: list[list[int]] | None = None
    channel_id: int | None = None
    use_global_device_ids: bool = False
    metadata: HloMetadata | None = None
    attributes: dict[str, str] = Field(default_factory=new_dict)  # text form only: every other attribute, as written


class HloComputation(Record):
    name: str
    is_entry: bool = False
    instructions: list[HloInstruction] = Field(default_factory=new_list)


class HloModule(Record):
    name: str
    entry: str  # the ENTRY computation's name
    computations: list[HloComputation] = Field(default_factory=new_list)
    frames: list[HloFrame] = Field(default_factory=new_list)
    form: Literal["text", "proto"] = "text"


# ---------------------------------------------------------------- facts (`nforensics hlo`)


class ConvertSite(Record):
    name: str
    computation: str
    change: str  # bf16->f32
    op_name: str | None = None


class DtypeFacts(Record):
    """Element types of what the instructions compute, and the converts between them."""

    compute: dict[str, int] = Field(default_factory=new_dict)  # element type -> arithmetic instructions producing it
    converts: dict[str, int] = Field(default_factory=new_dict)  # "bf16->f32" -> convert instructions
    mixed_bf16_f32: bool = False  # both bf16 and f32 arithmetic in one module
    sites: list[ConvertSite] = Field(default_factory=new_list)  # the first converts between bf16 and f32


class CustomCallFacts(Record):
    target: str
    calls: int
    kernels: dict[str, int] = Field(default_factory=new_dict)  # kernel name (backend_config or op_name) -> calls
    instructions: list[str] = Field(default_factory=new_list)


class ConvFacts(Record):
    name: str
    computation: str
    shape: str  # the output, e.g. f32[2,8,16,16]
    window: str  # 7x7
    stride: str  # 2x2
    padding: str  # 3_3x3_3 (low_high per dimension)
    lhs_dilate: str
    rhs_dilate: str
    feature_group_count: int = 1
    batch_group_count: int = 1
    dim_labels: str
    backward: Literal["input", "filter"] | None = None  # the gradient it computes, from its structure
    backward_of: str | None = None  # the forward convolution it is the gradient of, when in the module
    why: str | None = None
    op_name: str | None = None
    source: str | None = None  # file:line of the framework code


class MemoryFacts(Record):
    """An HBM estimate from shapes: what the entry computation takes and gives, and what it creates."""

    parameters: int = 0
    parameter_bytes: int = 0
    output_bytes: int = 0
    intermediate_bytes: int = 0  # every other entry instruction's output, as if nothing were freed (an upper bound)
    largest: str | None = None  # the largest single tensor: name and shape
    largest_bytes: int = 0
    estimate_bytes: int = 0  # parameters + outputs: the least the device must hold


class DynamicShape(Record):
    name: str
    opcode: str
    shape: str  # f32[<=8,4]


class CollectiveFacts(Record):
    name: str
    opcode: str
    computation: str
    replica_groups: list[list[int]] | None = None
    source_target_pairs: list[list[int]] | None = None
    channel_id: int | None = None
    bytes: int = 0
    op_name: str | None = None


class BigOp(Record):
    name: str
    opcode: str
    computation: str
    shape: str
    bytes: int
    op_name: str | None = None
    source: str | None = None


class HloReport(Record):
    path: str
    form: Literal["text", "proto"]
    module: str
    entry: str
    computations: int
    instructions: int
    ops: dict[str, int] = Field(default_factory=new_dict)  # opcode -> instructions, most first
    dtypes: DtypeFacts = Field(default_factory=DtypeFacts)
    custom_calls: list[CustomCallFacts] = Field(default_factory=new_list)
    convolutions: list[ConvFacts] = Field(default_factory=new_list)
    memory: MemoryFacts = Field(default_factory=MemoryFacts)
    dynamic: list[DynamicShape] = Field(default_factory=new_list)
    collectives: list[CollectiveFacts] = Field(default_factory=new_list)
    biggest: list[BigOp] = Field(default_factory=new_list)
    named: list[BigOp] = Field(default_factory=new_list)  # the ops `hlo FILE --op NAME` asked for


class HloChange(Record):
    key: str  # dotted, e.g. ops.convolution, custom_calls.AwsNeuronCustomNativeKernel.kernels.sendrecv_kernel
    a: int | float | str | bool | None = None  # None: absent from that module
    b: int | float | str | bool | None = None


class HloDiff(Record):
    a: str
    b: str
    changes: list[HloChange] = Field(default_factory=new_list)
