"""Row 3 of DESIGN.md's measured table: replay-prep code outside the graph
rebinds the metadata the captured reader reads (meta.x = x.to(torch.int32)).
The graph keeps reading the tensors bound at capture, which the caching
allocator frees and hands out again: measured faults (CUDA error 717) or
stale reads.
capguard verify expectation: original fault or stale-read; fixed clean once
capguard fix turns the rebinding into a copy_ into the captured tensors.
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


class ForwardMetadata:
    pass


META = ForwardMetadata()


def prepare_metadata(seq_lens, page_table):
    """Replay-prep: runs before capture and before every replay."""
    META.seq_lens_i32 = seq_lens.reshape(-1).to(torch.int32)
    META.page_table_i32 = page_table.to(torch.int32)


def bf16_index_logits(q, k_cache):
    q0 = q[:, 0].contiguous()
    out = torch.empty((q.shape[0], T), dtype=torch.float32, device=q.device)
    _paged_logits_kernel[(q.shape[0],)](q0, k_cache, META.seq_lens_i32, META.page_table_i32, out, MAX_PAGES,
                                        T=T, D=D, PAGE=PAGE)
    return out


class DecodeGraph:
    def capture(self, q, k_cache, seq_lens, page_table):
        prepare_metadata(seq_lens, page_table)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = bf16_index_logits(q, k_cache)

    def replay(self, seq_lens, page_table):
        prepare_metadata(seq_lens, page_table)
        self.graph.replay()
        return self.out
