"""A reader already on persistent buffers: copy_ into preallocated int32 buffers, then launch."""
import torch
import triton
import triton.language as tl


@triton.jit
def _reader_kernel(q_ptr, sl_ptr, pt_ptr, out_ptr):
    b = tl.program_id(0)
    tl.store(out_ptr + b, tl.load(q_ptr + b) + tl.load(sl_ptr + b) + tl.load(pt_ptr + b))


class PersistentReader:
    """Capture-safe: every buffer the kernel reads is allocated once, in __init__."""

    def __init__(self, max_bs, max_pages, device):
        self.sl = torch.zeros(max_bs, dtype=torch.int32, device=device)
        self.pt = torch.zeros((max_bs, max_pages), dtype=torch.int32, device=device)
        self.q = torch.zeros((max_bs, 128), dtype=torch.bfloat16, device=device)

    def __call__(self, q, seq_lens, page_table, out):
        bs = q.shape[0]
        self.sl[:bs].copy_(seq_lens.reshape(-1))
        self.pt[:bs].copy_(page_table)
        self.q[:bs].copy_(q[:, 0])
        _reader_kernel[(bs,)](self.q[:bs], self.sl[:bs], self.pt[:bs], out)
        return out


def capture(reader, q, seq_lens, page_table, out):
    g = torch.cuda.CUDAGraph()
    for _ in range(3):
        reader(q, seq_lens, page_table, out)
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        reader(q, seq_lens, page_table, out)
    return g
