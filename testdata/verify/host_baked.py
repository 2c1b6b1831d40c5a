"""Row 4 of DESIGN.md's measured table: a host value, int(seq_lens_cpu.max()),
read from the batch's CPU mirror at capture and baked into the captured work
(the clamp bound). A later batch with longer sequences replays with the old
bound: measured diverged in 2 of 5 replays at batch 4.
The spec gives seq_lens_cpu as a mirror of seq_lens: a CPU tensor the
harness refreshes in place after every new batch, as a scheduler does.
capguard verify expectation: original stale-read; fixed stale-read (CG102
has no automatic fix).
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


def bf16_index_logits(q, k_cache, seq_lens, page_table, seq_lens_cpu):
    max_len = int(seq_lens_cpu.max())
    out = torch.full((q.shape[0], T), float("-inf"), dtype=torch.float32, device=q.device)
    seq_lens_i32 = torch.clamp(seq_lens.reshape(-1), max=max_len).to(torch.int32)
    _paged_logits_kernel[(q.shape[0],)](q[:, 0].contiguous(), k_cache, seq_lens_i32, page_table.to(torch.int32), out,
                                        MAX_PAGES, T=T, D=D, PAGE=PAGE)
    return out


class DecodeGraph:
    def capture(self, q, k_cache, seq_lens, page_table, seq_lens_cpu):
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = bf16_index_logits(q, k_cache, seq_lens, page_table, seq_lens_cpu)

    def replay(self):
        self.graph.replay()
        return self.out
