"""A pure-torch stand-in for flash-attn's two entry points (the GPU machine
has no flash-attn): written for capguard's trace test, not a copy of it.
The decode path is capture-safe: fixed shapes, no host reads."""

import torch


def _expand_kv(k, heads):
    """[..., kv_heads, d] -> [..., heads, d] (grouped-query attention)."""
    kvh = k.shape[-2]
    if kvh == heads:
        return k
    shape = list(k.shape)
    return k.unsqueeze(-2).expand(*shape[:-1], heads // kvh, shape[-1]).reshape(*shape[:-2], heads, shape[-1])


def flash_attn_varlen_func(q, k, v, max_seqlen_q=None, cu_seqlens_q=None, max_seqlen_k=None, cu_seqlens_k=None,
                           softmax_scale=None, causal=True, block_table=None, **_):
    if block_table is not None:
        raise NotImplementedError("stand-in flash_attn_varlen_func: no paged (prefix-cached) prefill")
    heads, d = q.shape[1], q.shape[2]
    scale = softmax_scale if softmax_scale is not None else d ** -0.5
    cq, ck = cu_seqlens_q.tolist(), cu_seqlens_k.tolist()
    outs = []
    for i in range(len(cq) - 1):
        qi = q[cq[i]:cq[i + 1]].float()
        ki = _expand_kv(k[ck[i]:ck[i + 1]], heads).float()
        vi = _expand_kv(v[ck[i]:ck[i + 1]], heads).float()
        s = torch.einsum("qhd,khd->hqk", qi, ki) * scale
        if causal:
            n, m = qi.shape[0], ki.shape[0]
            allowed = torch.arange(m, device=q.device)[None, :] <= (torch.arange(n, device=q.device)[:, None] + (m - n))
            s = s.masked_fill(~allowed[None], float("-inf"))
        outs.append(torch.einsum("hqk,khd->qhd", s.softmax(-1), vi).to(q.dtype))
    return torch.cat(outs)


def flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=None, block_table=None, softmax_scale=None, causal=True, **_):
    bs, sq, heads, d = q.shape
    scale = softmax_scale if softmax_scale is not None else d ** -0.5
    k = k_cache[block_table.long()]  # [bs, blocks, block_size, kv_heads, d]
    v = v_cache[block_table.long()]
    k = _expand_kv(k.reshape(bs, -1, k.shape[-2], d), heads).float()
    v = _expand_kv(v.reshape(bs, -1, v.shape[-2], d), heads).float()
    s = torch.einsum("bqhd,bkhd->bhqk", q.float(), k) * scale
    valid = torch.arange(k.shape[1], device=q.device)[None, :] < cache_seqlens[:, None]
    s = s.masked_fill(~valid[:, None, None, :], float("-inf"))
    return torch.einsum("bhqk,bkhd->bqhd", s.softmax(-1), v).to(q.dtype)
