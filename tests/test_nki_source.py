"""`nforensics nki FILE.py`: kernel facts from source with ast, on the seed kernels and on small synthetic files."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from conftest import assert_clean_error, cli
from nforensics.artifacts import facts_for

KERNELS = Path(__file__).resolve().parent / "nki_kernels"
SEED_000 = KERNELS / "seed000_lnc2_sendrecv.py"
SEED_001 = KERNELS / "seed001_deltanet_chunk.py"
SEED_002 = KERNELS / "seed002_back_to_back.py"


def nki_json(path: Path) -> dict:
    code, out, err = cli("nki", path, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def source(tmp_path: Path, code: str) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(textwrap.dedent(code))
    return path


def kernels_by_name(report: dict) -> dict[str, dict]:
    return {k["name"]: k for k in report["kernels"]}


# ---------------------------------------------------------------- the seeds


def test_seed_000_sendrecv_kernel_launched_with_grid_2_at_least_twice_per_graph():
    kernel = nki_json(SEED_000)["kernels"][0]
    assert kernel["name"] == "lnc2_reduce" and kernel["uses_sendrecv"] and kernel["uses_program_id"]
    assert kernel["grid_max"] == 2 and kernel["call_sites"][0]["grid"] == [2]
    assert kernel["call_sites"][0]["scope"] == "ReduceLayer.forward"
    # One launch per ReduceLayer, and ReduceLayer is built in a loop of n_layers: at least two per graph.
    assert kernel["calls_per_graph"] == 2 and kernel["calls_per_graph_exact"] is False
    assert kernel["allocations"] == {"sbuf": 2, "shared_hbm": 1}
    facts = facts_for(None, SEED_000, None)
    assert facts["nki.sendrecv_kernel_calls"] == 2 and facts["nki.grid_max"] == 2
    assert facts["nki.back_to_back_without_sync"] is False


def test_seed_001_about_20_matmuls_and_40_sbuf_buffers_with_a_6_round_loop():
    kernel = nki_json(SEED_001)["kernels"][0]
    assert kernel["nc_matmul_calls"] == 20
    assert kernel["nc_matmul_calls_unrolled"] == 30  # 2 matmuls in the 6-round Neumann loop
    assert kernel["sbuf_allocations"] == 48 and kernel["psum_allocations"] == 20  # 6 through the _sb helper
    assert kernel["loops"] == [{"kind": "sequential_range", "line": kernel["loops"][0]["line"], "trip_count": 6}]
    assert kernel["calls_per_graph"] == 3 and kernel["calls_per_graph_exact"] is True  # 3 DeltaNet layers
    facts = facts_for(None, SEED_001, None)
    assert facts["nki.nc_matmul_calls_max"] == 20 and facts["nki.sbuf_allocations_max"] >= 40
    assert facts["nki.sendrecv_kernel_calls"] == 0


def test_seed_002_two_kernels_back_to_back_without_mark_step():
    report = nki_json(SEED_002)
    assert sorted(kernels_by_name(report)) == ["ao_to_mo_kernel", "mp2_energy_kernel"]
    [pair] = report["back_to_back"]
    assert pair["scope"] == "<module>"
    assert pair["first"] == "ao_to_mo_transform() -> ao_to_mo_kernel" and pair["second"] == "mp2_energy() -> mp2_energy_kernel"
    assert facts_for(None, SEED_002, None)["nki.back_to_back_without_sync"] is True
    code, out, _ = cli("nki", SEED_002)
    assert code == 0 and "back to back without xm.mark_step()" in out and "mp2_energy_kernel" in out


def test_text_output_is_a_kernel_table_with_launches():
    code, out, _ = cli("nki", SEED_000)
    assert code == 0
    assert "lnc2_reduce" in out and "sendrecv" in out and "2 (at least)" in out
    assert "Launches" in out and "ReduceLayer.forward" in out and "[2]" in out


# ---------------------------------------------------------------- counting rules


def test_mark_step_between_launches_breaks_the_pair_and_the_loop_count(tmp_path):
    path = source(tmp_path, """
        import nki
        import torch_xla
        import torch_xla.core.xla_model as xm

        @nki.jit
        def first(x):
            return x

        @nki.jit
        def second(x):
            return x

        a = first(1)
        xm.mark_step()
        b = second(a)
        torch_xla.sync()
        c = first(b)
        xm.mark_step()
        for step in range(10):
            d = second(c)
            xm.mark_step()
    """)
    report = nki_json(path)
    assert report["back_to_back"] == [] and report["sync_calls"] == 4
    # Each iteration ends with mark_step, so it is its own graph: one launch per graph from the loop.
    assert kernels_by_name(report)["second"]["calls_per_graph"] == 2
    assert kernels_by_name(report)["first"]["calls_per_graph"] == 2


def test_loops_trip_counts_aliases_and_buffers(tmp_path):
    path = source(tmp_path, """
        from neuronxcc import nki
        import neuronxcc.nki.language as lang
        from nki.isa import nc_matmul, core_barrier

        TILES = 4
        N_CORES = 2

        def matmul_kernel(a, b):
            acc = lang.zeros((128, 512), dtype=lang.float32, buffer=lang.psum)
            tile = lang.ndarray((128, 128), dtype=a.dtype)
            big = lang.ndarray((128, 128), dtype=a.dtype, buffer=lang.private_hbm)
            for i in lang.affine_range(TILES):
                for j in lang.static_range(2, 10, 2):
                    nc_matmul(acc, tile, tile)
            for k in lang.sequential_range(a.shape[0]):
                nc_matmul(acc, tile, tile)
            for part in (0, 1, 2):
                core_barrier(acc, (0, 1))
            return big

        kernel = nki.jit(matmul_kernel)
        kernel[N_CORES, 2](1, 2)
        kernel[N_CORES](1, 2)
    """)
    kernel = nki_json(path)["kernels"][0]
    assert kernel["name"] == "kernel"
    assert [(line["kind"], line["trip_count"]) for line in kernel["loops"]] == [
        ("affine_range", 4), ("static_range", 4), ("sequential_range", None), ("for", 3)]
    assert kernel["nc_matmul_calls"] == 2 and kernel["nc_matmul_calls_unrolled"] == 17  # 4*4 + 1 (unknown loop)
    assert kernel["allocations"] == {"psum": 1, "sbuf": 1, "private_hbm": 1}  # ndarray defaults to SBUF
    assert kernel["uses_core_barrier"] and not kernel["uses_sendrecv"]
    assert [s["grid"] for s in kernel["call_sites"]] == [[2, 2], [2]] and kernel["grid_max"] == 4
    # Two launches one after the other in the same scope, nothing between them.
    assert facts_for(None, path, None)["nki.back_to_back_without_sync"] is True


def test_launches_in_loops_and_repeated_modules_multiply(tmp_path):
    path = source(tmp_path, """
        import nki
        import torch.nn as nn

        @nki.jit
        def k(x):
            return x

        class Block(nn.Module):
            def forward(self, x):
                for _ in range(3):
                    x = k[2](x)
                return x

        class Net(nn.Module):
            def __init__(self, depth):
                super().__init__()
                self.blocks = [Block(), Block()]
                self.extra = [Block() for _ in range(depth)]

        def helper(x):
            return k(x)

        def run(x):
            while x:
                x = helper(x)
    """)
    kernel = nki_json(path)["kernels"][0]
    # forward: 3 per call, 2 + at least 2 instances; helper: once per while-iteration (at least 2).
    assert kernel["calls_per_graph"] == 3 * 4 + 2 and kernel["calls_per_graph_exact"] is False


def test_file_without_kernels_is_reported_not_an_error(tmp_path):
    report = nki_json(source(tmp_path, "import torch\nx = torch.ones(3)\n"))
    assert report["kernels"] == [] and report["warnings"] == ["no @nki.jit kernel found"]
    assert facts_for(None, tmp_path / "kernels.py", None)["nki.kernel_calls_max"] == 0


@pytest.mark.parametrize("content, message", [
    (b"def broken(:\n    pass\n", "not valid Python: line 1"),
    (b"x = '\xff\xfe'\n", "not UTF-8"),
])
def test_unreadable_source_exits_2_with_one_line(tmp_path, content, message):
    path = tmp_path / "bad.py"
    path.write_bytes(content)
    code, out, err = cli("nki", path)
    assert out == ""
    assert_clean_error(code, err, message)
    assert cli("nki", tmp_path / "absent.py")[0] == 2
