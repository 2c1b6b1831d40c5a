import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, s_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=m)
    tl.store(out_ptr + row * n_cols + cols, x * tl.load(s_ptr + row), mask=m)


def scale_rows(x, scales):  # context: launcher
    if bool((scales == 0).any()):  # want: CG101~
        scales = scales.clamp_min(1e-6)
    out = torch.empty_like(x)
    _scale_kernel[(x.shape[0],)](x, scales, out, x.shape[1], BLOCK=1024)
    return out
