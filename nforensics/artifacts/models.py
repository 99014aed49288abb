"""The facts the artifact readers produce: NEFF files, compile-cache entries, NKI kernel sources.

Types only. Field names are part of the JSON output of `nforensics neff|cache|nki --format json`:
add, never rename. Sizes are bytes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from nforensics.defaults import new_dict, new_list
from nforensics.records import Analysis, Record

# ---------------------------------------------------------------- NEFF


class NeffHeader(Record):
    """Every field of the 1024-byte little-endian NEFF header, decoded."""

    pkg_version: int
    header_size: int
    data_size: int
    neff_version: str  # "major.minor"
    build_version: str
    num_tpb: int
    hash: str  # the 32 stored bytes, hex
    uuid: str
    name: str
    requested_tpb_count: int
    tpb_per_node: list[int]  # trailing zeros dropped
    feature_bits: int
    lnc_size: int


class FeatureBit(Record):
    bit: str  # "0x400"
    name: str
    named: bool  # also spelled as a `neff_features` string in def.json


class FeatureBits(Record):
    """The header's incompatible-feature mask, decoded with an unofficial map: best effort, labelled so."""

    value: str  # hex
    decoded: list[FeatureBit] = Field(default_factory=new_list)
    unknown_bits: list[str] = Field(default_factory=new_list)
    newer_compiler_bits: bool = False  # bits the runtime reads as "built by a newer compiler"
    best_effort: bool = True
    note: str = "bit names from third-party notes on neuronx-cc 2.24, not an AWS specification"


class DmaQueue(Record):
    type: str | None = None  # in / out / data / embedding_update / dynamic
    owner: str | None = None  # engine that drives it
    num_queues: int | None = None
    semaphores: int = 0
    dge: bool = False  # descriptor-generation-engine (dynamic) queue


class VariableGroup(Record):
    count: int
    total_bytes: int


class EngineStream(Record):
    instr_file: str | None = None
    bytes: int | None = None
    records_64b: int | None = None  # the streams are fixed 64-byte records (inferred)
    dma_descriptors: int = 0


class SubgraphFacts(Record):
    definition: str | None = None
    neff_features: list[str] = Field(default_factory=new_list)
    activation_sets: list[str] = Field(default_factory=new_list)
    dma_queues: dict[str, DmaQueue] = Field(default_factory=new_dict)
    runtime_semaphores: int | None = None
    runtime_events: int | None = None
    activation_semaphore: int | None = None
    rank_world_size: int | None = None
    variables: dict[str, VariableGroup] = Field(default_factory=new_dict)  # by variable type
    spill_variables: int = 0
    engines: dict[str, EngineStream] = Field(default_factory=new_dict)


class IoTensor(Record):
    name: str
    direction: Literal["input", "output"]
    dtype: str | None = None
    shape: list[int] | None = None
    bytes: int | None = None


class DeviceCheck(Record):
    device: str
    device_core: str  # NeuronCore-vN
    neff_core: str | None = None
    newer_than_device: bool | None = None  # None: the NEFF's core generation is unknown
    note: str


class NeffReport(Record):
    path: str
    file_size: int
    header: NeffHeader
    payload: Literal["gzip-tar", "tar"]
    hash_algorithm: Literal["md5", "sha256"]
    hash_ok: bool | None  # None: no hash stored (all zero)
    hash_order: Literal["digest", "word-swapped"] | None = None
    hash_note: str | None = None
    compiler_version: str | None = None
    kelp_version: str | None = None
    codename: str | None = None
    target: str | None = None
    platforms: list[str] = Field(default_factory=new_list)
    neuron_core: str | None = None
    lnc_size: int
    subgraphs: list[str] = Field(default_factory=new_list)
    feature_bits: FeatureBits
    activation_sets: dict[str, list[str]] = Field(default_factory=new_dict)  # per subgraph
    io: list[IoTensor] = Field(default_factory=new_list)
    per_subgraph: dict[str, SubgraphFacts] = Field(default_factory=new_dict)
    hlo_stats: dict[str, int | float] = Field(default_factory=new_dict)
    members: int = 0
    unpacked_bytes: int = 0
    device_check: DeviceCheck | None = None
    warnings: list[str] = Field(default_factory=new_list)
    extracted_to: str | None = None


class NeffChange(Record):
    key: str  # dotted path into the NEFF report, e.g. per_subgraph.sg00.engines.PE.bytes
    a: Any = None
    b: Any = None


class NeffDiff(Record):
    a: str
    b: str
    changes: list[NeffChange] = Field(default_factory=new_list)


# ---------------------------------------------------------------- compile cache

CacheState = Literal["done", "failed", "incomplete"]


class CacheEntry(Record):
    path: str
    compiler_version: str
    compiler_build: str | None = None  # the +<hash> suffix of the neuronxcc-<version> folder
    module: str  # MODULE_<graph>+<flags>
    graph_hash: str
    flags_hash: str
    flags: list[str] | None = None  # compile_flags.json
    state: CacheState
    files: dict[str, int] = Field(default_factory=new_dict)  # file name -> size
    size_bytes: int = 0
    modified: str  # ISO 8601, newest file in the entry
    age_seconds: int
    neff: str | None = None
    hlo: str | None = None
    log: str | None = None
    error: str | None = None  # the first error line of a failed entry's log
    neff_lnc_size: int | None = None
    neff_feature_bits: str | None = None
    diagnosis: Analysis | None = None  # filled by `cache --failed`
    # `cache --failed`: the facts of the entry's HLO module that hypotheses read, in words, or why it was not read
    hlo_facts: list[str] = Field(default_factory=new_list)
    hlo_note: str | None = None


class CacheReport(Record):
    root: str
    root_from: str  # argument / NEURON_CC_FLAGS --cache_dir / NEURON_COMPILE_CACHE_URL / default
    entries: list[CacheEntry] = Field(default_factory=new_list)
    counts: dict[str, int] = Field(default_factory=new_dict)  # state -> entries
    total_bytes: int = 0
    ignored: list[str] = Field(default_factory=new_list)  # folders that look like neither version nor MODULE


# ---------------------------------------------------------------- NKI source

LoopKind = Literal["affine_range", "sequential_range", "static_range", "range", "for", "while"]  # for: other iterables


class LoopFacts(Record):
    kind: LoopKind
    line: int
    trip_count: int | None = None  # None when not a constant


class CallSite(Record):
    line: int
    scope: str  # enclosing function (Class.method) or <module>
    grid: list[int | None] | None = None  # kernel[2](...) -> [2]; None for a plain call
    repeat: int = 1  # loop trip counts around the call in its scope (unknown loops count 2)
    scope_runs: int = 1  # how often the scope runs per graph (a module's forward: once per instance)


class KernelFacts(Record):
    name: str
    line: int
    isa_calls: dict[str, int] = Field(default_factory=new_dict)  # nki.isa function -> calls in source
    nc_matmul_calls: int = 0
    nc_matmul_calls_unrolled: int = 0  # times constant loop trip counts
    allocations: dict[str, int] = Field(default_factory=new_dict)  # sbuf / psum / hbm / shared_hbm / private_hbm
    sbuf_allocations: int = 0
    psum_allocations: int = 0
    hbm_allocations: int = 0
    uses_sendrecv: bool = False
    uses_core_barrier: bool = False
    uses_program_id: bool = False
    loops: list[LoopFacts] = Field(default_factory=new_list)
    call_sites: list[CallSite] = Field(default_factory=new_list)
    calls_per_graph: int = 0
    calls_per_graph_exact: bool = True  # False: a loop or repeated module without a constant count
    grid_max: int | None = None  # largest launch grid (product of its dimensions)


class BackToBack(Record):
    """Two NKI launches in one scope with no xm.mark_step() / torch_xla.sync() between them."""

    scope: str
    first: str
    first_line: int
    second: str
    second_line: int


class NkiReport(Record):
    path: str
    kernels: list[KernelFacts] = Field(default_factory=new_list)
    back_to_back: list[BackToBack] = Field(default_factory=new_list)
    sync_calls: int = 0
    warnings: list[str] = Field(default_factory=new_list)
