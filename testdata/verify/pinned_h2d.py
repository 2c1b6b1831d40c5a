"""Row 5 of DESIGN.md's measured table: a pinned host temporary copied to the
device during capture, torch.tensor(list, pin_memory=True).to(dev,
non_blocking=True). The graph records the copy from that host address; every
replay copies whatever the address holds then, never the new batch: measured
diverged in 5 of 5 replays at every batch size.
capguard verify expectation: original stale-read; fixed stale-read (CG103 has
no automatic fix).
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


def bf16_index_logits(q, k_cache, page_table, seq_lens_cpu):
    seq_lens_i32 = torch.tensor(seq_lens_cpu.tolist(), dtype=torch.int32, pin_memory=True).to(q.device, non_blocking=True)
    out = torch.empty((q.shape[0], T), dtype=torch.float32, device=q.device)
    _paged_logits_kernel[(q.shape[0],)](q[:, 0].contiguous(), k_cache, seq_lens_i32, page_table.to(torch.int32), out,
                                        MAX_PAGES, T=T, D=D, PAGE=PAGE)
    return out


class DecodeGraph:
    def capture(self, q, k_cache, page_table, seq_lens_cpu):
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = bf16_index_logits(q, k_cache, page_table, seq_lens_cpu)

    def replay(self):
        self.graph.replay()
        return self.out
