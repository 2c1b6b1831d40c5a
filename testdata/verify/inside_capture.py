"""Row 1 of DESIGN.md's measured table: the motivating bf16 index reader.

The wrapper builds q[:, 0].contiguous(), seq_lens.reshape(-1).to(torch.int32)
and page_table.to(torch.int32) on every call and hands them to the Triton
kernel. Called inside the capture, the three conversion kernels are captured
too and their outputs live in the graph's private pool: measured clean.
capguard verify expectation: original clean, fixed clean.
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


def bf16_index_logits(q, k_cache, seq_lens, page_table):
    """Paged index logits for bf16 index keys. Capture-safe."""
    q0 = q[:, 0].contiguous()
    seq_lens_i32 = seq_lens.reshape(-1).to(torch.int32)
    page_table_i32 = page_table.to(torch.int32)
    out = torch.empty((q.shape[0], T), dtype=torch.float32, device=q.device)
    _paged_logits_kernel[(q.shape[0],)](q0, k_cache, seq_lens_i32, page_table_i32, out, MAX_PAGES,
                                        T=T, D=D, PAGE=PAGE)
    return out


class DecodeGraph:
    """How a server runs it: capture once per batch size, replay per step."""

    def capture(self, q, k_cache, seq_lens, page_table):
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = bf16_index_logits(q, k_cache, seq_lens, page_table)

    def replay(self):
        self.graph.replay()
        return self.out
