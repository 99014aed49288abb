"""Load, compile and run serialized HLO modules with a real XLA (jax on CPU), in a process of its own.

JAX starts threads as it loads, and a process with threads must not fork: the test process forks (multiprocessing
pools in the folder tests), so XLA never runs in it. `xla_run(modules)` writes the modules to a temporary folder
and runs this file on them; the tests that need it skip where jax is not installed.

As a script: `python tests/xla_run.py A.pb B.pb ...` prints one JSON line per module: `{"loaded": true,
"name": ..., "outputs": [{"shape": [1, 8, 8, 32], "values": ...}, ...]}`, where `outputs` (what the module returned
on arrays of ones: each output's shape, and its values when it holds at most VALUES_UP_TO) is null for a module
that cannot run here (tuple parameters, custom-calls, collectives on one CPU device), or
`{"error": "..."}` when XLA refused it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
VALUES_UP_TO = 4096  # elements of an output whose values are printed too
NOT_ON_ONE_CPU = ("custom-call", "all-reduce", "all-gather", "reduce-scatter", "collective-permute")


def needs_jax() -> None:
    import pytest

    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed (the test extra brings it on Python 3.11 and newer)")


def xla_run(modules: list[Any]) -> list[dict]:
    """What XLA made of each module (a message, or serialized bytes): loaded, and the output shapes of a run."""
    needs_jax()
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for n, module in enumerate(modules):
            path = Path(folder) / f"{n}.pb"
            path.write_bytes(module if isinstance(module, bytes) else module.SerializeToString())
            paths.append(str(path))
        done = subprocess.run([sys.executable, __file__, *paths], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def _runs_on_cpu(module: Any) -> bool:
    if any(shape.element_type == 13 for shape in module.host_program_shape.parameters):
        return False
    return not any(i.opcode in NOT_ON_ONE_CPU for c in module.computations for i in c.instructions)


# PrimitiveType numbers (xla_data.proto) to numpy dtypes; bf16 (16) comes from jax.
DTYPES = {1: "bool", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "uint8", 7: "uint16", 8: "uint32", 9: "uint64",
          10: "float16", 11: "float32", 12: "float64"}


def _execute(client: Any, data: bytes, module: Any) -> list[dict]:
    import jax
    import numpy as np
    from jax._src.lib import _jax
    from jax._src.lib import xla_client as xc

    device = client.devices()[0]
    executable = client.compile_and_load(_jax.mlir.hlo_to_stablehlo(data), xc.DeviceList((device,)), xc.CompileOptions())
    arguments = []
    for shape in module.host_program_shape.parameters:
        dtype = DTYPES[shape.element_type] if shape.element_type != 16 else jax.numpy.bfloat16
        arguments.append(jax.device_put(np.ones(tuple(shape.dimensions), dtype), device))
    results = [np.asarray(out) for out in executable.execute(arguments)]
    return [{"shape": list(r.shape), "values": r.astype(np.float64).tolist() if r.size <= VALUES_UP_TO else None}
            for r in results]


def main(paths: list[str]) -> None:
    sys.path.insert(0, str(REPO))
    import jax
    from jaxlib import _hlo

    from nforensics.artifacts.hlo_proto import load_message

    client = jax.devices("cpu")[0].client
    for path in paths:
        data = Path(path).read_bytes()
        try:
            loaded = _hlo.HloModule.from_serialized_hlo_module_proto(data)  # XLA's own CreateFromProto
            module = load_message(data)
            outputs = _execute(client, data, module) if _runs_on_cpu(module) else None
        except Exception as exc:  # noqa: BLE001 - what XLA refused, for the test to show
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:2000]}))
            continue
        print(json.dumps({"loaded": True, "name": loaded.name, "outputs": outputs}))


if __name__ == "__main__":
    main(sys.argv[1:])
