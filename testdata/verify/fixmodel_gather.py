"""Issue 18, the right CG301 fix: a function that claims capture safety converts
its indices (`idx.to(torch.int32)`) for a kernel that only loads through them.
capguard proves the kernel never stores through that parameter (its body is
read), so the persistent-buffer fix is safe.
capguard verify expectation: original clean (the conversion runs inside the
capture, graph-owned), fixed clean and bitwise equal to eager.
"""
import torch
import triton
import triton.language as tl

D = 128


@triton.jit
def _gather_rows_kernel(idx_ptr, src_ptr, out_ptr, D: tl.constexpr):
    b = tl.program_id(0)
    d = tl.arange(0, D)
    row = tl.load(idx_ptr + b)
    tl.store(out_ptr + b * D + d, tl.load(src_ptr + row * D + d))


def gather_rows(idx, table):
    """Capture-safe row gather: out[b] = table[idx[b]]."""
    out = torch.empty((idx.shape[0], D), dtype=table.dtype, device=table.device)
    idx_i32 = idx.to(torch.int32)
    _gather_rows_kernel[(idx.shape[0],)](idx_i32, table, out, D=D)
    return out
