"""`torch.library.triton_op` makes a custom operator of a function that launches Triton kernels, as
`torch.library.custom_op` does of any function: calling what it returns runs the function (through
the dispatcher), so a captured call of it captures the function's body, and the function runs
wherever the operator runs. A function the decorator does not wrap is called as it is."""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def _gather_kernel(src_ptr, idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    i = tl.load(idx_ptr + offs, mask=mask, other=0)
    tl.store(out_ptr + offs, tl.load(src_ptr + i, mask=mask), mask=mask)


@triton_op("demo::gather_rows", mutates_args={})
def gather_rows(src: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:  # context: captured launcher
    n = int(idx.numel())
    if idx.max().item() >= src.numel():  # want: CG101
        raise IndexError("index out of range")
    out = torch.empty(n, device=src.device, dtype=src.dtype)
    wrap_triton(_gather_kernel)[(triton.cdiv(n, 256),)](src, idx, out, n, BLOCK=256)
    return out


class Sampler:
    def __init__(self, src, idx):  # context: eager
        self.src, self.idx = src, idx
        self.graph = torch.cuda.CUDAGraph()
        self.out = None

    def capture(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = gather_rows(self.src, self.idx)
