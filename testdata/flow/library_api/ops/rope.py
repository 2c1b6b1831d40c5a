import torch
import triton
import triton.language as tl


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(out_ptr + i, x * tl.load(cos_ptr + i, mask=m) + x * tl.load(sin_ptr + i, mask=m), mask=m)


def _longest(positions):  # context: launcher
    return int(positions.max().item())  # want: CG101~


def apply_rope(x, positions, cos, sin):  # context: launcher
    span = _longest(positions)
    out = torch.empty_like(x)
    n = x.numel()
    _rope_kernel[(triton.cdiv(n, 256),)](x, cos[:span], sin[:span], out, n, BLOCK=256)  # want: CG102~
    return out


def rope_tables(positions, dim):  # context: eager
    """Exported, but it launches nothing."""
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, device=positions.device) / dim))
    return torch.outer(positions.float(), inv).cos()


def rope_reference(x, positions, cos, sin):  # context: eager
    """Public and launching, but not the package's API: the __init__ does not re-export it."""
    span = int(positions.max().item())
    out = torch.empty_like(x)
    _rope_kernel[(triton.cdiv(x.numel(), 256),)](x, cos[:span], sin[:span], out, x.numel(), BLOCK=256)
    return out
