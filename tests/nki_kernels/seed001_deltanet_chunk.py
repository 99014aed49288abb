"""Test input (never run): the shape of the seed 001 kernel, a chunked DeltaNet gated delta rule.

The public report describes it, without its full code: ten (128, 128) float32 inputs, two outputs,
~20 nisa.nc_matmul calls, ~40+ SBUF buffers, a 6-round Neumann power-doubling loop
(nl.sequential_range(6)), used in 3 of the 4 decoder layers of an NxDI model. This file is written to
that description so the source reader can be checked against it.
"""

import nki
import nki.isa as nisa
import nki.language as nl
import torch.nn as nn

P = 128
NEUMANN_ROUNDS = 6
DELTANET_LAYERS = 3


def _sb(shape):
    return nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf)


@nki.jit
def deltanet_chunk_fwd(q, k, v, beta, g_cumsum, g_last, state_in, lower_mask, identity, lower_mask_diag):
    out = nl.ndarray((P, P), dtype=q.dtype, buffer=nl.shared_hbm)
    state_out = nl.ndarray((P, P), dtype=q.dtype, buffer=nl.shared_hbm)

    # Load the ten inputs.
    q_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=q_sb, src=q)
    k_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=k_sb, src=k)
    v_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=v_sb, src=v)
    beta_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=beta_sb, src=beta)
    g_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=g_sb, src=g_cumsum)
    glast_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=glast_sb, src=g_last)
    state_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=state_sb, src=state_in)
    mask_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=mask_sb, src=lower_mask)
    ident_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ident_sb, src=identity)
    maskd_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=maskd_sb, src=lower_mask_diag)

    # Phase 1: gates and scaled operands (element-wise).
    g_exp = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=g_exp, op=nl.exp, data=g_sb)
    g_neg_exp = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=g_neg_exp, op=nl.exp, data=g_sb, scale=-1.0)
    glast_exp = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=glast_exp, op=nl.exp, data=glast_sb)
    k_beta = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=k_beta, data1=k_sb, data2=beta_sb, op=nl.multiply)
    v_beta = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=v_beta, data1=v_sb, data2=beta_sb, op=nl.multiply)
    q_gate = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=q_gate, data1=q_sb, data2=g_exp, op=nl.multiply)
    k_gate = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=k_gate, data1=k_sb, data2=g_neg_exp, op=nl.multiply)
    kb_gate = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=kb_gate, data1=k_beta, data2=g_exp, op=nl.multiply)

    # Phase 2: intra-chunk attention matrices (4 matmuls).
    kb_t = _sb((P, P))
    nisa.nc_transpose(dst=kb_t, data=kb_gate)
    q_t = _sb((P, P))
    nisa.nc_transpose(dst=q_t, data=q_gate)
    a_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=a_ps, stationary=kb_t, moving=k_gate)
    a_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=a_sb, data1=a_ps, data2=maskd_sb, op=nl.multiply)
    s_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=s_ps, stationary=q_t, moving=k_gate)
    s_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s_sb, data1=s_ps, data2=mask_sb, op=nl.multiply)
    kk_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=kk_ps, stationary=kb_t, moving=kb_gate)
    kk_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=kk_sb, src=kk_ps)
    qk_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=qk_ps, stationary=q_t, moving=kb_gate)
    qk_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=qk_sb, data1=qk_ps, data2=maskd_sb, op=nl.multiply)

    # Phase 3: T = (I - A)^-1 by Neumann power doubling, 6 rounds (2 matmuls per round).
    t_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=t_sb, data1=ident_sb, data2=a_sb, op=nl.add)
    a_pow = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=a_pow, src=a_sb)
    for _ in nl.sequential_range(NEUMANN_ROUNDS):
        sq_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=sq_ps, stationary=a_pow, moving=a_pow)
        nisa.tensor_copy(dst=a_pow, src=sq_ps)
        upd_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=upd_ps, stationary=t_sb, moving=a_pow)
        t_next = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=t_next, data1=t_sb, data2=upd_ps, op=nl.add)
        nisa.tensor_copy(dst=t_sb, src=t_next)

    # Phase 4: residual check R = I - (I - A) T and one refinement step (3 matmuls).
    r_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=r_ps, stationary=a_sb, moving=t_sb)
    r_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=r_sb, data1=ident_sb, data2=r_ps, op=nl.subtract)
    rt_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=rt_ps, stationary=t_sb, moving=r_sb)
    t_ref = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=t_ref, data1=t_sb, data2=rt_ps, op=nl.add)
    chk_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=chk_ps, stationary=qk_sb, moving=t_ref)
    chk_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=chk_sb, src=chk_ps)

    # Phase 5: corrected values and keys (4 matmuls).
    t_t = _sb((P, P))
    nisa.nc_transpose(dst=t_t, data=t_ref)
    u_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=u_ps, stationary=t_t, moving=v_beta)
    u_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=u_sb, src=u_ps)
    w_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=w_ps, stationary=t_t, moving=kb_gate)
    w_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=w_sb, src=w_ps)
    w_t = _sb((P, P))
    nisa.nc_transpose(dst=w_t, data=w_sb)
    ws_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ws_ps, stationary=w_t, moving=state_sb)
    ws_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=ws_sb, src=ws_ps)
    v_new = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=v_new, data1=u_sb, data2=ws_sb, op=nl.subtract)
    vn_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=vn_ps, stationary=ident_sb, moving=v_new)
    vn_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=vn_sb, src=vn_ps)

    # Phase 6: output o = q_gate @ S_in + S @ v_new (3 matmuls).
    o1_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=o1_ps, stationary=q_t, moving=state_sb)
    o1_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=o1_sb, src=o1_ps)
    s_t = _sb((P, P))
    nisa.nc_transpose(dst=s_t, data=s_sb)
    o2_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=o2_ps, stationary=s_t, moving=vn_sb)
    o2_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=o2_sb, src=o2_ps)
    o3_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=o3_ps, stationary=ident_sb, moving=o2_sb)
    o_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=o_sb, data1=o1_sb, data2=o3_ps, op=nl.add)
    nisa.dma_copy(dst=out, src=o_sb)

    # Phase 7: state update S_out = exp(g_last) * S_in + (k * decay)^T @ v_new (4 matmuls).
    decay = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=decay, data1=glast_exp, data2=g_neg_exp, op=nl.multiply)
    k_dec = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=k_dec, data1=k_sb, data2=decay, op=nl.multiply)
    kd_t = _sb((P, P))
    nisa.nc_transpose(dst=kd_t, data=k_dec)
    su_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=su_ps, stationary=kd_t, moving=vn_sb)
    su_sb = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=su_sb, src=su_ps)
    sd_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=sd_ps, stationary=ident_sb, moving=state_sb)
    s_dec = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s_dec, data1=sd_ps, data2=glast_exp, op=nl.multiply)
    sn_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=sn_ps, stationary=ident_sb, moving=su_sb)
    s_new = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s_new, data1=s_dec, data2=sn_ps, op=nl.add)
    chk2_ps = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=chk2_ps, stationary=chk_sb, moving=s_new)
    s_out = nl.ndarray((P, P), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s_out, data1=s_new, data2=chk2_ps, op=nl.maximum)
    nisa.dma_copy(dst=state_out, src=s_out)
    return out, state_out


class DeltaNetAttention(nn.Module):
    """Context encoding through the kernel: one launch per layer, no grid."""

    def forward(self, q, k, v, beta, g_cumsum, g_last, state, lower_mask, identity, lower_mask_diag):
        return deltanet_chunk_fwd(q, k, v, beta, g_cumsum, g_last, state, lower_mask, identity, lower_mask_diag)


class GQAAttention(nn.Module):
    def forward(self, *args):
        return args[0]


class HybridDecoder(nn.Module):
    """4 decoder layers: 3 DeltaNet + 1 GQA, compiled as one NxDI graph."""

    def __init__(self):
        super().__init__()
        self.deltanet = nn.ModuleList([DeltaNetAttention() for _ in range(DELTANET_LAYERS)])
        self.gqa = GQAAttention()
