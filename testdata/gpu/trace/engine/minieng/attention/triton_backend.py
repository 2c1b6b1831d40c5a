import torch
import triton
import triton.language as tl

from .. import runlog
from .base import PagedBackendBase


@triton.jit
def _paged_decode_kernel(Q, K, V, BlockTable, SeqLens, Out, max_len, num_pages, stride_bt, sm_scale,
                         H: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr, MAX_SEQ: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, MAX_SEQ)
    q = tl.load(Q + (b * H + h) * D + offs_d).to(tl.float32)
    n = tl.load(SeqLens + b)
    n = tl.minimum(tl.maximum(n, 0), MAX_SEQ)
    n = tl.minimum(n, max_len)
    mask = offs_n < n
    page = tl.load(BlockTable + b * stride_bt + offs_n // PAGE, mask=mask, other=0)
    page = tl.minimum(tl.maximum(page, 0), num_pages - 1)
    slot = page.to(tl.int64) * PAGE + offs_n % PAGE
    kv_off = (slot[:, None] * H + h) * D + offs_d[None, :]
    k = tl.load(K + kv_off, mask=mask[:, None], other=0.0).to(tl.float32)
    v = tl.load(V + kv_off, mask=mask[:, None], other=0.0).to(tl.float32)
    s = tl.sum(k * q[None, :], axis=1) * sm_scale
    s = tl.where(mask, s, -1.0e30)
    m = tl.max(s, axis=0)
    p = tl.where(mask, tl.exp(s - m), 0.0)
    l = tl.sum(p, axis=0)
    o = tl.sum(p[:, None] * v, axis=0) / tl.maximum(l, 1.0e-20)
    tl.store(Out + (b * H + h) * D + offs_d, o)


class Backend(PagedBackendBase):
    """Paged decode attention in Triton."""

    def forward_decode(self, q, k, v, layer_id, fb):
        runlog.here()
        bs = fb.batch_size
        self.store_kv(k, v, layer_id, bs)
        cfg = self.cfg
        if cfg.plant == "baked":
            max_len = int(self.seq_lens_cpu[:bs].max())  # PLANT-BAKED
        else:
            max_len = cfg.max_seq
        if cfg.plant == "sync" and self.seq_lens[:bs].max().item() > cfg.max_seq:  # PLANT-SYNC
            raise ValueError("sequence longer than max_seq")
        out = torch.empty((bs, cfg.heads, cfg.head_dim), dtype=torch.float32, device=q.device)
        bt = self.block_table[:bs]
        _paged_decode_kernel[(bs, cfg.heads)](
            q.float().contiguous(), self.k_cache[layer_id], self.v_cache[layer_id], bt, self.seq_lens, out,
            max_len, cfg.num_pages, bt.stride(0), cfg.head_dim ** -0.5,
            H=cfg.heads, D=cfg.head_dim, PAGE=cfg.page_size, MAX_SEQ=cfg.max_seq)
        out = out.to(q.dtype)
        if fb.meta is not None and fb.meta.scale is not None:
            out = out * fb.meta.scale[:, None, None].to(out.dtype)
        return out
