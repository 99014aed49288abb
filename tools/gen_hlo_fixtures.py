"""Generate the HLO fixtures in tests/fixtures/hlo/ with a real XLA: jax lowering on CPU.

Each module is written twice, as XLA writes it: text (`.hlo`, what `--xla_dump_hlo_as_text` prints: the
default HloPrintOptions, with metadata and the stack-frame index) and the serialized HloModuleProto
(`.pb`, what torch-neuronx and the compile cache keep as `model.hlo_module.pb`). The large module is
gzipped (`.hlo.gz`, `.pb.gz`, mtime 0 so the bytes are reproducible).

jax is not a dependency of nforensics and this is not part of CI; run it by hand after changing a module:

    .venv/bin/pip install jax jaxlib
    .venv/bin/python tools/gen_hlo_fixtures.py            # rewrites tests/fixtures/hlo/ and its SOURCE.md

The modules stand for the seed failures' graphs: a 7x7 stride-2 convolution and its gradient (seed 003,
NCC_ITEN404), a bf16 model with f32 islands (the XLA_USE_BF16 activation-table seed), one custom kernel
called twice in one graph (seed 000, NCC_IXLV002), collectives with replica groups, a graph of a few thousand
instructions, bounded dynamic shapes and iota replica groups.
"""

from __future__ import annotations

import gzip
import os
import sys
from functools import partial
from pathlib import Path

# Four CPU devices, so shard_map lowers real collectives with replica groups. Set before jax is imported.
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fixtures" / "hlo"

# The kernel name the custom-call fixture carries in its backend_config, like an NKI kernel launched
# through torch-neuronx (target AwsNeuronCustomNativeKernel).
KERNEL_TARGET = "AwsNeuronCustomNativeKernel"


def _modules():  # noqa: C901 - one small function per fixture, kept together so SOURCE.md reads them in order
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    f32, bf16 = jnp.float32, jnp.bfloat16

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (2, 2), ((3, 3), (3, 3)), dimension_numbers=("NCHW", "OIHW", "NCHW"))

    def conv_loss(x, w):
        return jnp.sum(conv(x, w) ** 2)

    image = jax.ShapeDtypeStruct((2, 3, 32, 32), f32)
    kernel = jax.ShapeDtypeStruct((8, 3, 7, 7), f32)
    yield "conv7x7", jax.jit(conv).lower(image, kernel), "a 7x7 stride-2 pad-3 convolution, NCHW / OIHW"
    yield ("conv7x7_grad", jax.jit(jax.grad(conv_loss, argnums=(0, 1))).lower(image, kernel),
           "jax.grad of sum(conv7x7(x, w)**2) for x and w: the forward convolution, its input gradient "
           "(lhs_dilate=2x2, reversed kernel) and its filter gradient (16x16 window, rhs_dilate=2x2)")

    def layer_norm(h):
        h32 = h.astype(f32)  # the f32 island: statistics in f32, as mixed-precision models do
        mean = jnp.mean(h32, axis=-1, keepdims=True)
        var = jnp.mean((h32 - mean) ** 2, axis=-1, keepdims=True)
        return ((h32 - mean) * lax.rsqrt(var + 1e-5)).astype(bf16)

    def bf16_mlp(x, w1, w2):
        h = layer_norm(jnp.tanh(x @ w1))
        logits = (h @ w2).astype(f32)
        return jax.nn.softmax(logits, axis=-1).astype(bf16)

    yield ("bf16_islands", jax.jit(bf16_mlp).lower(jax.ShapeDtypeStruct((16, 64), bf16), jax.ShapeDtypeStruct((64, 128), bf16),
                                                   jax.ShapeDtypeStruct((128, 32), bf16)),
           "a bf16 MLP (tanh, layer norm, softmax) whose layer norm and softmax run in f32: converts both ways")

    tile = jax.ShapeDtypeStruct((128, 512), f32)
    sendrecv = jax.ffi.ffi_call(KERNEL_TARGET, tile, has_side_effect=True, custom_call_api_version=1,
                                legacy_backend_config='{"kernel_name": "sendrecv_kernel", "grid": [2]}')
    rmsnorm = jax.ffi.ffi_call(KERNEL_TARGET, tile, has_side_effect=True, custom_call_api_version=1,
                               legacy_backend_config='kernel_name=rmsnorm_kernel;note="quoted"')

    def two_launches(a):
        return rmsnorm(sendrecv(sendrecv(a) + 1.0))

    yield ("custom_kernel_twice", jax.jit(two_launches).lower(tile),
           f"one custom kernel (target {KERNEL_TARGET}, kernel_name sendrecv_kernel in a JSON backend_config) called "
           "twice in one graph, then a second kernel whose backend_config is a plain string (printed quoted, with escapes); "
           "built with jax.ffi.ffi_call(custom_call_api_version=1, legacy_backend_config=...)")

    mesh = jax.make_mesh((2, 2), ("data", "model"))

    @partial(jax.shard_map, mesh=mesh, in_specs=P("data", "model"), out_specs=P("data", "model"))
    def collectives(a):
        summed = lax.psum(a, "model")
        gathered = lax.all_gather(summed, "model", axis=1, tiled=True)
        return lax.psum_scatter(gathered, "data", scatter_dimension=1, tiled=True) + lax.ppermute(
            gathered, "data", perm=[(0, 1), (1, 0)])[:, :8]

    sharded = jax.ShapeDtypeStruct((8, 16), f32, sharding=NamedSharding(mesh, P("data", "model")))
    yield ("allreduce", jax.jit(collectives).lower(sharded),
           "shard_map over a 2x2 mesh of 4 CPU devices: psum (all-reduce, replica_groups={{0,1},{2,3}}), all_gather, "
           "psum_scatter (reduce-scatter) and ppermute (collective-permute)")

    def block(h, weights):
        wq, wk, wv, wo, w1, w2 = weights
        x = layer_norm(h)
        q, k, v = x @ wq, x @ wk, x @ wv
        scores = (q @ k.T).astype(f32) / 8.0
        attention = jax.nn.softmax(scores, axis=-1).astype(bf16) @ v
        h = h + attention @ wo
        return h + jax.nn.gelu(layer_norm(h) @ w1) @ w2

    def tower(h, *weights):
        for layer in range(len(weights) // 6):  # unrolled on purpose: a few thousand instructions
            h = block(h, weights[6 * layer: 6 * layer + 6])
        return h

    layers, width = 48, 64
    shapes = [(width, width)] * 4 + [(width, 4 * width), (4 * width, width)]
    weights = [jax.ShapeDtypeStruct(shape, bf16) for _ in range(layers) for shape in shapes]
    yield ("large", jax.jit(tower).lower(jax.ShapeDtypeStruct((32, width), bf16), *weights),
           f"{layers} unrolled bf16 transformer blocks (layer norm and softmax in f32), width {width}: a few thousand "
           "instructions; gzipped")

    yield "dynamic", DYNAMIC_TEXT, ("bounded dynamic shapes (f32[<=8,4]): jax on CPU does not lower them, so this module "
                                    "is HLO text written here and parsed and re-serialised by jaxlib's own HLO parser "
                                    "(jaxlib._hlo.hlo_module_from_text)")
    yield "iota_groups", IOTA_TEXT, ("all-reduces whose replica groups are written in the iota form ([2,2]<=[4] and "
                                     "[2,2]<=[2,2]T(1,0)), which jax does not print; HLO text written here and "
                                     "re-serialised by jaxlib's HLO parser like `dynamic`")


DYNAMIC_TEXT = """HloModule dynamic_rows

ENTRY main {
  rows = f32[8,4]{1,0} parameter(0)
  count = s32[] parameter(1)
  bounded = f32[<=8,4]{1,0} set-dimension-size(rows, count), dimensions={0}
  doubled = f32[<=8,4]{1,0} add(bounded, bounded)
  size = s32[] get-dimension-size(doubled), dimensions={0}
  ROOT out = (f32[<=8,4]{1,0}, s32[]) tuple(doubled, size)
}
"""


IOTA_TEXT = """HloModule iota_groups

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT sum = f32[] add(x, y)
}

ENTRY main {
  p = f32[8]{0} parameter(0)
  rows = f32[8]{0} all-reduce(p), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=add
  ROOT columns = f32[8]{0} all-reduce(rows), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0),
    use_global_device_ids=true, to_apply=add
}
"""


def _module(lowered):
    from jaxlib import _hlo

    if isinstance(lowered, str):
        return _hlo.hlo_module_from_text(lowered)
    return lowered.compiler_ir("hlo").as_hlo_module()


def _write(path: Path, data: bytes, gzipped: bool) -> Path:
    if gzipped:
        path = path.with_name(path.name + ".gz")
        data = gzip.compress(data, compresslevel=9, mtime=0)
    path.write_bytes(data)
    return path


def main() -> int:
    import jax
    import jaxlib

    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, lowered, what in _modules():
        module = _module(lowered)
        text = module.to_string()  # default HloPrintOptions: the form --xla_dump_hlo_as_text writes
        proto = module.as_serialized_hlo_module_proto()
        gzipped = name == "large"
        written = [_write(OUT / f"{name}.hlo", text.encode(), gzipped), _write(OUT / f"{name}.pb", proto, gzipped)]
        instructions = sum(line.startswith("  ") and " = " in line for line in text.splitlines())
        rows.append(f"| {name} | {', '.join(p.name for p in written)} | {instructions} | {what} |")
        print(f"{name}: {instructions} instructions, " + ", ".join(f"{p.name} {p.stat().st_size} B" for p in written))
    source = SOURCE_MD.format(jax=jax.__version__, jaxlib=jaxlib.__version__, python=sys.version.split()[0],
                              rows="\n".join(rows), script=Path(__file__).resolve())
    (OUT / "SOURCE.md").write_text(source, encoding="utf-8")
    return 0


SOURCE_MD = """# HLO fixtures: how they were made

Generated by `tools/gen_hlo_fixtures.py` with jax {jax} and jaxlib {jaxlib} (Python {python}) on CPU, with
`XLA_FLAGS=--xla_force_host_platform_device_count=4`; nothing here was written by hand except the text of
`dynamic` (see below). Regenerate with `.venv/bin/pip install jax jaxlib && .venv/bin/python tools/gen_hlo_fixtures.py`.

For each module, `jax.jit(f).lower(*shapes).compiler_ir("hlo").as_hlo_module()` gives XLA's HloModule, and:
- `NAME.hlo` is `module.to_string()`: XLA's default print options, the text `--xla_dump_hlo_as_text` writes
  (`%` names, computation signatures, metadata, the FileNames / FunctionNames / FileLocations / StackFrames index);
- `NAME.pb` is `module.as_serialized_hlo_module_proto()`: the HloModuleProto, as `model.hlo_module.pb`.

The large module is gzipped (`.hlo.gz`, `.pb.gz`, gzip mtime 0). The custom-call module is built with
`jax.ffi.ffi_call(target, ..., custom_call_api_version=1, legacy_backend_config=...)`: a real custom-call whose
target is `AwsNeuronCustomNativeKernel` (never executed: lowering does not need the target registered).
`dynamic` and `iota_groups` are HLO text written in the script (jax on CPU lowers neither bounded dynamic
shapes nor iota replica groups), parsed by jaxlib's own HLO parser (`jaxlib._hlo.hlo_module_from_text`) and
written back by XLA in both forms.
The metadata's source lines (the stack-frame index) point into this generator as it sat on the machine that ran
it ({script}); "instructions" counts the lines of the text that define one.

| module | files | instructions | what |
|---|---|---|---|
{rows}

## large_planted (the HLO reducer's module)

`large_planted.hlo.gz` and `large_planted.pb.gz` (5163 instructions) are generated by `tools/gen_hlo_planted.py`
(jax 0.10.2, jaxlib 0.10.2, CPU), not by the script above: the `large` tower (48 bf16 blocks, width 64) with one
side branch planted after block 24: the hidden state seen as a 1x32x8x8 image, a 7x7 stride-1 pad-3 convolution
with a new 32x32x7x7 kernel parameter, a transpose to NHWC whose operand is the convolution, reshaped and added
back. `tests/fakes/hlo_compiler.py` (a test double) fails with NCC_ITEN404 on exactly that structure;
`tests/test_hlo_reduce_large.py` and `bench/hlo_reduce.py` reduce the module to it. Written as XLA writes it
(`module.to_string()` and the serialized HloModuleProto), gzipped with mtime 0.
"""


if __name__ == "__main__":
    raise SystemExit(main())
