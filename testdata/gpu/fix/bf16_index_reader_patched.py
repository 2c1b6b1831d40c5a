"""bf16 index-key reader for a DeepSeek-style sparse indexer (the motivating case of DESIGN.md).

The decode step is captured into CUDA graphs; this reader computes the index logits over the
paged bf16 index keys that pick the top-k pages.
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


PAGE = 16


@triton.jit
def _index_logits_kernel(q_ptr, k_ptr, seq_lens_ptr, page_table_ptr, out_ptr, max_pages,
                         T: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr):
    b = tl.program_id(0)
    t = tl.arange(0, T)
    d = tl.arange(0, D)
    length = tl.load(seq_lens_ptr + b)
    page = tl.load(page_table_ptr + b * max_pages + t // PAGE, mask=t < length, other=0)
    row = page * PAGE + t % PAGE
    k = tl.load(k_ptr + row[:, None] * D + d[None, :], mask=(t < length)[:, None], other=0.0)
    q = tl.load(q_ptr + b * D + d)
    s = tl.sum(k.to(tl.float32) * q.to(tl.float32)[None, :], axis=1)
    s = tl.where(t < length, s, float("-inf"))
    tl.store(out_ptr + b * T + t, s)


def bf16_index_logits(q, index_k, seq_lens, page_table, max_tokens):
    """Capture-safe: all buffers are allocated by the caller, so this reader can run inside a CUDA graph."""  # want: CG302
    batch = q.shape[0]
    out = torch.empty((batch, max_tokens), dtype=torch.float32, device=q.device)
    q_bf16 = persistent_buffer("bf16_index_reader.bf16_index_logits.q_bf16", q[:, 0])  # want: CG301
    seq_lens_i32 = persistent_buffer("bf16_index_reader.bf16_index_logits.seq_lens_i32", seq_lens.reshape(-1), torch.int32)  # want: CG301
    page_table_i32 = persistent_buffer("bf16_index_reader.bf16_index_logits.page_table_i32", page_table, torch.int32)  # want: CG301
    _index_logits_kernel[(batch,)](
        q_bf16, index_k, seq_lens_i32, page_table_i32, out, page_table_i32.shape[1],
        T=max_tokens, D=q.shape[-1], PAGE=PAGE,
    )
    return out
