import torch

from .. import runlog
from .base import PagedBackendBase


class Backend(PagedBackendBase):
    """Paged decode attention in plain torch (gather, masked softmax)."""

    def forward_decode(self, q, k, v, layer_id, fb):
        runlog.here()
        bs = fb.batch_size
        cfg = self.cfg
        self.store_kv(k, v, layer_id, bs)
        n = torch.arange(cfg.max_seq, device=q.device)
        pages = self.block_table[:bs].to(torch.int64).clamp(0, cfg.num_pages - 1)
        slots = pages[:, n // cfg.page_size] * cfg.page_size + n % cfg.page_size
        kk = self.k_cache[layer_id][slots].float()
        vv = self.v_cache[layer_id][slots].float()
        s = torch.einsum("bhd,bnhd->bhn", q.float(), kk) * cfg.head_dim ** -0.5
        valid = n[None, :] < self.seq_lens[:bs, None].clamp(0, cfg.max_seq)
        s = s.masked_fill(~valid[:, None, :], -1.0e30)
        p = torch.softmax(s, dim=-1) * valid[:, None, :]
        out = torch.einsum("bhn,bnhd->bhd", p, vv)
        return out.to(q.dtype)
