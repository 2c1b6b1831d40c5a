import torch
import triton
import triton.language as tl


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) * tl.load(cos_ptr + i, mask=m), mask=m)


def apply_rope(x, positions, cos):  # context: eager
    span = int(positions.max().item())
    out = torch.empty_like(x)
    _rope_kernel[(triton.cdiv(x.numel(), 256),)](x, cos[:span], out, x.numel(), BLOCK=256)
    return out


def fused_rope(x, cos, out):  # context: claimed
    """Capture-safe: writes into the caller's persistent buffer."""
    _rope_kernel[(triton.cdiv(x.numel(), 256),)](x, cos, out, x.numel(), BLOCK=256)
    return out
