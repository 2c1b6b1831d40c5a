"""Row 2 of DESIGN.md's measured table: the same reader patched onto persistent
buffers filled with copy_ (the fix direction): measured clean.
capguard verify expectation: original clean, fixed clean (nothing to fix).
"""
import torch
import triton
import triton.language as tl

PAGE = 16  # tokens per page
D = 128  # index head dim
T = 256  # max tokens per sequence
MAX_PAGES = T // PAGE


@triton.jit
def _paged_logits_kernel(q_ptr, k_ptr, sl_ptr, pt_ptr, out_ptr, max_pages,
                         T: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr):
    # one program per sequence: logits[b, t] = q[b] . k[page_table[b, t // PAGE] * PAGE + t % PAGE]
    b = tl.program_id(0)
    t = tl.arange(0, T)
    d = tl.arange(0, D)
    L = tl.load(sl_ptr + b)
    page = tl.load(pt_ptr + b * max_pages + t // PAGE, mask=t < L, other=0)
    row = page * PAGE + t % PAGE
    k = tl.load(k_ptr + row[:, None] * D + d[None, :], mask=(t < L)[:, None], other=0.0)
    q = tl.load(q_ptr + b * D + d)
    s = tl.sum(k.to(tl.float32) * q.to(tl.float32)[None, :], axis=1)
    s = tl.where(t < L, s, float("-inf"))
    tl.store(out_ptr + b * T + t, s)

_BUFFERS = {}


def _persistent(key, like, dtype):
    """A view of a buffer that outlives every call, shaped like `like`; grown only outside capture."""
    buf = _BUFFERS.get(key)
    if buf is None or buf.numel() < like.numel():
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError("persistent buffer %r must grow while capturing: warm up at the largest batch first" % (key,))
        buf = _BUFFERS[key] = torch.empty(like.numel(), dtype=dtype, device=like.device)
    return buf[: like.numel()].view(like.shape)


def bf16_index_logits(q, k_cache, seq_lens, page_table):
    q0 = _persistent("q0", q[:, 0], q.dtype)
    q0.copy_(q[:, 0])
    seq_lens_i32 = _persistent("seq_lens", seq_lens.reshape(-1), torch.int32)
    seq_lens_i32.copy_(seq_lens.reshape(-1))
    page_table_i32 = _persistent("page_table", page_table, torch.int32)
    page_table_i32.copy_(page_table)
    out = torch.empty((q.shape[0], T), dtype=torch.float32, device=q.device)
    _paged_logits_kernel[(q.shape[0],)](q0, k_cache, seq_lens_i32, page_table_i32, out, MAX_PAGES,
                                        T=T, D=D, PAGE=PAGE)
    return out


class DecodeGraph:
    def capture(self, q, k_cache, seq_lens, page_table):
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = bf16_index_logits(q, k_cache, seq_lens, page_table)

    def replay(self):
        self.graph.replay()
        return self.out
