import torch
import triton
import triton.language as tl


@triton.jit
def _norm_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) * tl.load(w_ptr + i, mask=m), mask=m)


def rms_norm(x, weight):  # context: captured
    """Exported, and the engine's decoder calls it: it runs where the engine puts it."""
    out = torch.empty_like(x)
    _norm_kernel[(triton.cdiv(x.numel(), 256),)](x, weight, out, x.numel(), BLOCK=256)
    return out
