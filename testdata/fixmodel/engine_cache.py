"""Fix model, pattern (f) through aliases, in the style of an inference
engine's attention layer: the paged KV cache and the query are updated in
place (a cache write through a view of a conversion that may return the
cache itself, rotary embedding applied in place by a method), so copying
them into persistent buffers would leave the caller's tensors stale; the
slot and position conversions only read by kernels keep their fix.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _page_checksum_kernel(cache_ptr, slot_ptr, out_ptr, D: tl.constexpr):
    i = tl.program_id(0)
    d = tl.arange(0, D)
    slot = tl.load(slot_ptr + i)
    tl.store(out_ptr + i, tl.sum(tl.load(cache_ptr + slot * D + d)))


@triton.jit
def _rope_cos_kernel(pos_ptr, table_ptr, q_ptr, out_ptr, D: tl.constexpr):
    i = tl.program_id(0)
    d = tl.arange(0, D)
    p = tl.load(pos_ptr + i)
    tl.store(out_ptr + i * D + d, tl.load(table_ptr + p * D + d) * tl.load(q_ptr + i * D + d))


class PagedAttention:
    def __init__(self, head_dim, cos_table):
        self.head_dim = head_dim
        self.cos_table = cos_table

    def write_cache(self, key, kv_cache, slot_mapping):
        """Capture-safe cache write: returns the old pages' checksums, then stores key in place."""  # want: CG302
        slots = slot_mapping.to(torch.int64)  # want: CG301
        cache = kv_cache.contiguous()  # want: CG301
        sums = torch.empty(slots.shape[0], device=key.device, dtype=key.dtype)
        _page_checksum_kernel[(slots.shape[0],)](cache, slots, sums, D=self.head_dim)
        pages = cache.view(-1, self.head_dim)
        pages[slots] = key
        return sums

    def read_cache(self, kv_cache, slot_mapping):
        """Capture-safe cache read: the cache is only read."""  # want: CG302
        slots = slot_mapping.to(torch.int64)  # want: CG301
        cache = kv_cache.contiguous()  # want: CG301
        sums = torch.empty(slots.shape[0], device=kv_cache.device, dtype=kv_cache.dtype)
        _page_checksum_kernel[(slots.shape[0],)](cache, slots, sums, D=self.head_dim)
        return sums

    def _rotate(self, q, scale):
        q[:, : self.head_dim // 2] *= scale

    def rope(self, positions, query):
        """Capture-safe rotary embedding: scaled cos rows, then the query rotated in place."""  # want: CG302
        pos = positions.to(torch.int64)  # want: CG301
        q = query.contiguous()  # want: CG301
        out = torch.empty_like(q)
        _rope_cos_kernel[(q.shape[0],)](pos, self.cos_table, q, out, D=self.head_dim)
        self._rotate(q, 0.5)
        return out
