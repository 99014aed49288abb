"""Generate tests/fixtures/hlo/large_planted.{hlo,pb}.gz: the large fixture's 48-block bf16 transformer with one
7x7 convolution feeding a transpose planted in block 24, the structure the HLO reducer's stand-in compiler
(tests/fakes/hlo_compiler.py) fails on. bench/hlo_reduce.py and tests/test_hlo_reduce_large.py reduce it.

jax is not a dependency of nforensics and this is not part of CI; run it by hand after changing the module:

    .venv/bin/pip install jax jaxlib
    .venv/bin/python tools/gen_hlo_planted.py

The tower is the one tools/gen_hlo_fixtures.py lowers for `large` (same blocks, same width); block 24 adds a
side branch: its hidden state (32, 64) seen as a 1x32x8x8 image, a 7x7 stride-1 pad-3 convolution with a
32x32x7x7 kernel (a new parameter), a transpose to NHWC, reshaped back and added to the hidden state. Lowered
without optimisation, the convolution's output is the transpose's operand. Written as XLA writes it: text
(`module.to_string()`) and the serialized HloModuleProto, both gzipped with mtime 0.
"""

from __future__ import annotations

import gzip
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fixtures" / "hlo"
LAYERS, WIDTH, PLANT_AT = 48, 64, 24


def lowered():
    import jax
    import jax.numpy as jnp
    from jax import lax

    f32, bf16 = jnp.float32, jnp.bfloat16

    def layer_norm(h):
        h32 = h.astype(f32)
        mean = jnp.mean(h32, axis=-1, keepdims=True)
        var = jnp.mean((h32 - mean) ** 2, axis=-1, keepdims=True)
        return ((h32 - mean) * lax.rsqrt(var + 1e-5)).astype(bf16)

    def block(h, weights):
        wq, wk, wv, wo, w1, w2 = weights
        x = layer_norm(h)
        q, k, v = x @ wq, x @ wk, x @ wv
        scores = (q @ k.T).astype(f32) / 8.0
        attention = jax.nn.softmax(scores, axis=-1).astype(bf16) @ v
        h = h + attention @ wo
        return h + jax.nn.gelu(layer_norm(h) @ w1) @ w2

    def planted(h, kernel):
        image = h.astype(f32).reshape(1, 32, 8, 8)
        conv = lax.conv_general_dilated(image, kernel, (1, 1), ((3, 3), (3, 3)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return h + jnp.transpose(conv, (0, 2, 3, 1)).reshape(32, WIDTH).astype(bf16)

    def tower(h, kernel, *weights):
        for layer in range(len(weights) // 6):
            h = block(h, weights[6 * layer: 6 * layer + 6])
            if layer == PLANT_AT:
                h = planted(h, kernel)
        return h

    shapes = [(WIDTH, WIDTH)] * 4 + [(WIDTH, 4 * WIDTH), (4 * WIDTH, WIDTH)]
    weights = [jax.ShapeDtypeStruct(shape, bf16) for _ in range(LAYERS) for shape in shapes]
    return jax.jit(tower).lower(jax.ShapeDtypeStruct((32, WIDTH), bf16), jax.ShapeDtypeStruct((32, 32, 7, 7), f32), *weights)


def main() -> int:
    module = lowered().compiler_ir("hlo").as_hlo_module()
    text = module.to_string()
    for name, data in (("large_planted.hlo.gz", text.encode()), ("large_planted.pb.gz", module.as_serialized_hlo_module_proto())):
        (OUT / name).write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    instructions = sum(line.startswith("  ") and " = " in line for line in text.splitlines())
    print(f"large_planted: {instructions} instructions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
