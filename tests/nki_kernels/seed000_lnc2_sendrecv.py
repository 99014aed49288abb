"""Test input (never run): the seed 000 reproducer for NCC_IXLV002, re-indented from the public report.

An LNC2 kernel using nisa.sendrecv, launched as kernel[2](...) once per ReduceLayer; the model stacks
n_layers of them in one traced graph, so the kernel runs two or more times per graph.
"""

import torch
import torch.nn as nn
import nki
import nki.isa as nisa
import nki.language as nl
import torch_neuronx

HIDDEN = 2048


@nki.jit
def lnc2_reduce(x):
    """Each core loads its row of x[2, H], exchanges it with the other core (sendrecv) and adds."""
    H = x.shape[1]
    core_id = nl.program_id(axis=0)
    other_core = 1 - core_id
    my_row = nl.ndarray((1, H), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=my_row, src=x[core_id:core_id + 1, :])
    recv_buf = nl.ndarray((1, H), dtype=x.dtype, buffer=nl.sbuf)
    nisa.sendrecv(
        src=my_row, dst=recv_buf,
        send_to_rank=other_core, recv_from_rank=other_core,
        pipe_id=0,
    )
    nisa.tensor_tensor(my_row, my_row, recv_buf, op=nl.add)
    out = nl.ndarray((1, H), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=my_row)
    return out


class ReduceLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Parameter(torch.randn(HIDDEN, HIDDEN, dtype=torch.bfloat16))

    def forward(self, x):
        x_2d = x.view(1, HIDDEN).expand(2, HIDDEN).contiguous()
        reduced = lnc2_reduce[2](x_2d)
        result = torch.matmul(reduced, self.proj.data)
        return result.unsqueeze(0)


class Model(nn.Module):
    def __init__(self, n_layers, out_dim):
        super().__init__()
        self.layers = nn.ModuleList([ReduceLayer() for _ in range(n_layers)])
        self.head = nn.Linear(HIDDEN, out_dim, bias=False).to(torch.bfloat16)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def trace_test(n_layers, out_dim):
    x = torch.randn(1, 1, HIDDEN, dtype=torch.bfloat16)
    model = Model(n_layers, out_dim)
    model.eval()
    try:
        torch_neuronx.trace(model, x, compiler_args=["--target=trn2", "--model-type", "transformer", "-O1"])
        return "PASS"
    except Exception as e:
        err = str(e)
        if "NCC_IXLV002" in err or "neuronx-cc failed with 70" in err:
            return "NCC_IXLV002"
        return f"other: {type(e).__name__}: {err[:200]}"


def main():
    configs = [(1, 128), (1, 256), (2, 256), (2, 128), (2, 2048), (3, 128)]
    for n_layers, out_dim in configs:
        print(n_layers, out_dim, trace_test(n_layers, out_dim))


if __name__ == "__main__":
    main()
