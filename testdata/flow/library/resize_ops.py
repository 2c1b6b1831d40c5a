"""Library mode, annotated parameters: a parameter annotated as host numbers (`float | None`,
`Optional[float]`, `Sequence[int] | None`, `tuple[int, ...]`) holds no tensor, so `int()` or
`float()` of it (or of its element) reads no device data and bakes nothing; the sizes computed from
it are fixed per graph like any argument. An unannotated parameter may be a tensor: `int()` of its
element is an assumed host read."""
import math
from typing import Optional, Sequence

import torch
import triton
import triton.language as tl


@triton.jit
def _resize_kernel(x_ptr, out_ptr, h_out, w_out, scale_h, scale_w, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * scale_h * scale_w)


def resize(  # context: launcher
    x: torch.Tensor,
    output_size: Sequence[int] | None = None,
    scales_h: float | None = None,
    scales_w: Optional[float] = None,
):
    factors = (scales_h, scales_w)
    n, c, h_in, w_in = x.shape
    if output_size is not None:
        h_out, w_out = int(output_size[0]), int(output_size[1])
    else:
        sh = sw = float(factors[0])
        h_out = max(int(math.floor(h_in * sh)), 1)
        w_out = max(int(math.floor(w_in * sw)), 1)
    out = torch.empty((n, c, h_out, w_out), device=x.device)
    _resize_kernel[(triton.cdiv(h_out * w_out, 128),)](x, out, h_out, w_out, float(h_out / h_in), float(w_out / w_in), BLOCK=128)
    return out


def resize_rows(x: torch.Tensor, rows: tuple[int, ...]):  # context: launcher
    total = sum(int(r) for r in rows)
    out = torch.empty((total, x.shape[1]), device=x.device)
    _resize_kernel[(total,)](x, out, total, x.shape[1], 1.0, 1.0, BLOCK=128)
    return out


def resize_any(x: torch.Tensor, output_size=None):  # context: launcher
    h_out = int(output_size[0])
    out = torch.empty((h_out, x.shape[1]), device=x.device)  # want: CG102~ "assumes `output_size` is a tensor"
    _resize_kernel[(h_out,)](x, out, h_out, x.shape[1], 1.0, 1.0, BLOCK=128)  # want: CG102~
    return out
