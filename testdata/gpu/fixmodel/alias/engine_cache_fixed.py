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


# Captured kernels must read stable addresses: keep per-call temporaries in
# buffers that outlive every graph (see `capguard rule CG301`).
_persistent_buffers = {}
_retired_buffers = []


def persistent_buffer(site, src, dtype=None, copy=False):
    """Copy src into the persistent buffer of site; return a view shaped like src."""
    dtype = src.dtype if dtype is None else dtype
    if not copy and dtype == src.dtype and src.is_cuda and src.is_contiguous() and torch.cuda.is_current_stream_capturing():
        return src  # nothing to convert: the graph reads the source where it is
    key = (site, dtype, src.device)
    n = src.numel()
    buf = _persistent_buffers.get(key)
    if buf is None or buf.numel() < n:
        if src.is_cuda and torch.cuda.is_current_stream_capturing():
            have = 0 if buf is None else buf.numel()
            raise RuntimeError(
                f"persistent_buffer {site!r}: needs {n} elements of {dtype} on "
                f"{src.device} but has {have} while the stream is capturing; "
                "warm up at the largest batch size before capture"
            )
        if buf is not None:
            _retired_buffers.append(buf)  # a graph captured earlier may read it
        buf = torch.empty(n, dtype=dtype, device=src.device)
        _persistent_buffers[key] = buf
    out = buf[:n].view(src.shape)
    out.copy_(src)
    return out


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
        slots = persistent_buffer("engine_cache.PagedAttention.write_cache.slots", slot_mapping, torch.int64)  # want: CG301
        cache = kv_cache.contiguous()  # want: CG301
        sums = torch.empty(slots.shape[0], device=key.device, dtype=key.dtype)
        _page_checksum_kernel[(slots.shape[0],)](cache, slots, sums, D=self.head_dim)
        pages = cache.view(-1, self.head_dim)
        pages[slots] = key
        return sums

    def read_cache(self, kv_cache, slot_mapping):
        """Capture-safe cache read: the cache is only read."""  # want: CG302
        slots = persistent_buffer("engine_cache.PagedAttention.read_cache.slots", slot_mapping, torch.int64)  # want: CG301
        cache = persistent_buffer("engine_cache.PagedAttention.read_cache.cache", kv_cache)  # want: CG301
        sums = torch.empty(slots.shape[0], device=kv_cache.device, dtype=kv_cache.dtype)
        _page_checksum_kernel[(slots.shape[0],)](cache, slots, sums, D=self.head_dim)
        return sums

    def _rotate(self, q, scale):
        q[:, : self.head_dim // 2] *= scale

    def rope(self, positions, query):
        """Capture-safe rotary embedding: scaled cos rows, then the query rotated in place."""  # want: CG302
        pos = persistent_buffer("engine_cache.PagedAttention.rope.pos", positions, torch.int64)  # want: CG301
        q = query.contiguous()  # want: CG301
        out = torch.empty_like(q)
        _rope_cos_kernel[(q.shape[0],)](pos, self.cos_table, q, out, D=self.head_dim)
        self._rotate(q, 0.5)
        return out
