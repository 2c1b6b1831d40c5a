"""Fix model, in-place kernels of an operator library: writes into the
source of a conversion reach the caller with or without a copy, so they
stop a fix only where the converted tensor is read after them; a kernel's
compile-time constant (`N: tl.constexpr`) is never a pointer it stores
through, however its value was computed.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _gate_kernel(x_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.sigmoid(tl.load(x_ptr + i)))


def _block_of(x):
    return triton.next_power_of_2(x.numel()), x.dtype


def gate_(x):
    """Capture-safe in-place gate: reads the contiguous x, writes x in the same launch."""  # want: CG302
    xc = x.contiguous()  # want: CG301
    _gate_kernel[(1,)](xc, x, N=x.numel())
    return x


def gate_twice(x):
    """Capture-safe double gate: x is scaled in place between two reads of its contiguous form."""  # want: CG302
    xc = x.contiguous()  # want: CG301
    o = torch.empty_like(x)
    _gate_kernel[(1,)](xc, o, N=x.numel())
    x.mul_(2)
    _gate_kernel[(1,)](xc, o, N=x.numel())
    return o


def gate_rows(x):
    """Capture-safe gate into a new tensor, its block size computed from the input."""  # want: CG302
    xc = x.contiguous()  # want: CG301
    n, _ = _block_of(xc)
    o = torch.empty_like(xc)
    _gate_kernel[(1,)](xc, o, N=n)
    return o


def _gate_all(x):
    out = torch.empty_like(x)
    _gate_kernel[(1,)](x, out, N=x.numel())
    return out


def _as_rows(x):
    return x.view(-1)


def gate_or_reduce(x, flat=False):
    """Capture-safe gate: the flat path returns a view of x, the other a new tensor a helper makes."""  # want: CG302
    if flat:
        out = _as_rows(x)
    else:
        x = x.contiguous()  # want: CG301?
        out = _gate_all(x)
        _gate_kernel[(1,)](x, out, N=x.numel())
    return out


def gate_rows_into(x):
    """Capture-safe gate written back into x's rows, a view a helper returns."""  # want: CG302
    xc = x.contiguous()  # want: CG301
    rows = _as_rows(xc)
    _gate_kernel[(1,)](xc, rows, N=x.numel())
    return x


@triton.jit
def _scatter_kernel(idx_ptr, val_ptr, out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    dst = tl.load(idx_ptr + i)
    tl.store(out_ptr + dst, tl.load(val_ptr + i))


def scatter_rows(idx, val, out):
    """Capture-safe scatter: the index values (loaded, not addresses) pick where out is written."""  # want: CG302
    idx32 = idx.to(torch.int32)  # want: CG301
    _scatter_kernel[(1,)](idx32, val, out, N=val.numel())
    return out


def observe(x, running_min, fresh):
    """Capture-safe observer: a fresh minimum written on one branch, the running one only read on the other."""  # want: CG302
    rmin = running_min.to(torch.float32)  # want: CG301
    out, cmin = torch.empty_like(x), torch.full_like(x, float("inf"))
    _gate_kernel[(1,)](rmin, out, N=x.numel())
    if not fresh:
        cmin = rmin
        _gate_kernel[(1,)](cmin, out, N=x.numel())
    else:
        _gate_kernel[(1,)](x, cmin, N=x.numel())
        out.add_(cmin)
    return out


def observe_or_fill(x, running_min, fused):
    """Capture-safe observer: the fused path returns early; the other rebinds the minimum to a new tensor a kernel fills."""  # want: CG302
    rmin = running_min.to(torch.float32)  # want: CG301
    out = torch.empty_like(x)
    if fused:
        cmin = rmin
        _gate_kernel[(1,)](cmin, out, N=x.numel())
        return out
    cmin = torch.empty_like(x)
    _gate_kernel[(1,)](rmin, cmin, N=x.numel())
    return cmin


def observe_fused(x, running_min, fused):
    """Capture-safe observer: the fused path reads an alias of the minimum and returns; the other fills a new one."""  # want: CG302
    rmin = running_min.to(torch.float32)  # want: CG301
    out = torch.empty_like(x)
    _gate_kernel[(1,)](rmin, out, N=x.numel())
    if fused:
        cmin = rmin
        _gate_kernel[(1,)](cmin, out, N=x.numel())
        return out
    if x.numel() > 1:
        cmin = torch.empty_like(x)
    else:
        cmin = torch.zeros_like(x)
    _gate_kernel[(1,)](x, cmin, N=x.numel())
    return cmin
