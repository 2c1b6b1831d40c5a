"""Capture guards in an op library that never captures: what a guard keeps out of capture
is not checked in the launcher context either. A launcher that refuses capture up front
(`if torch.cuda.is_current_stream_capturing(): raise`) syncs only in eager calls; one
whose guard does not exit still syncs under its callers' capture."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


def _launch(x, out, scale):  # context: launcher
    _scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), scale, BLOCK=1024)


def quantize_dynamic(x):  # context: launcher
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("quantize_dynamic reads the scale on the host; use quantize_static under capture")
    scale = 127.0 / float(x.abs().max().item())
    out = torch.empty_like(x)
    _launch(x, out, scale)
    return out


def quantize_static(x, scale):  # context: launcher
    out = torch.empty_like(x)
    if not torch.cuda.is_current_stream_capturing():
        # A debug check that only eager calls make.
        assert x.isfinite().all().item()
    _launch(x, out, scale)
    return out


def quantize_checked(x, scale):  # context: launcher
    if torch.cuda.is_current_stream_capturing():
        scale = float(scale)
    # No exit under the guard: this runs under the caller's capture.
    if x.isnan().any().item():  # want: CG101~
        raise FloatingPointError("nan input")
    out = torch.empty_like(x)
    _launch(x, out, scale)
    return out


def describe(x):  # context: eager
    # Launches nothing: not a launcher.
    return f"{x.shape} {x.dtype}"
