"""Fix model, in-place kernels of an operator library: writes into the
source of a conversion reach the caller with or without a copy, so they
stop a fix only where the converted tensor is read after them; a kernel's
compile-time constant (`N: tl.constexpr`) is never a pointer it stores
through, however its value was computed.
"""
import torch
import triton
import triton.language as tl


# Captured kernels must read stable addresses: keep per-call temporaries in
# buffers that outlive every graph (see `capguard rule CG301`).
_persistent_buffers = {}
_retired_buffers = []


def persistent_buffer(site, src, dtype=None, copy=False):
    """Copy src into the persistent buffer of site; return a view shaped like src."""
    dtype = src.dtype if dtype is None else dtype
    if not copy and dtype == src.dtype and src.is_cuda and src.is_contiguous() and torch.cuda.is_current_stream_capturing():
        return src  # nothing to convert: the graph reads the source where it is
    key = (site, dtype, src.device)
    n = src.numel()
    buf = _persistent_buffers.get(key)
    if buf is None or buf.numel() < n:
        if src.is_cuda and torch.cuda.is_current_stream_capturing():
            have = 0 if buf is None else buf.numel()
            raise RuntimeError(
                f"persistent_buffer {site!r}: needs {n} elements of {dtype} on "
                f"{src.device} but has {have} while the stream is capturing; "
                "warm up at the largest batch size before capture"
            )
        if buf is not None:
            _retired_buffers.append(buf)  # a graph captured earlier may read it
        buf = torch.empty(n, dtype=dtype, device=src.device)
        _persistent_buffers[key] = buf
    out = buf[:n].view(src.shape)
    out.copy_(src)
    return out


@triton.jit
def _gate_kernel(x_ptr, o_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(o_ptr + i, tl.sigmoid(tl.load(x_ptr + i)))


def _block_of(x):
    return triton.next_power_of_2(x.numel()), x.dtype


def gate_(x):
    """Capture-safe in-place gate: reads the contiguous x, writes x in the same launch."""  # want: CG302
    xc = persistent_buffer("inplace_kernels.gate_.xc", x)  # want: CG301
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
    xc = persistent_buffer("inplace_kernels.gate_rows.xc", x)  # want: CG301
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
        x = persistent_buffer("inplace_kernels.gate_or_reduce.x", x)  # want: CG301?
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
    idx32 = persistent_buffer("inplace_kernels.scatter_rows.idx32", idx, torch.int32)  # want: CG301
    _scatter_kernel[(1,)](idx32, val, out, N=val.numel())
    return out


def observe(x, running_min, fresh):
    """Capture-safe observer: a fresh minimum written on one branch, the running one only read on the other."""  # want: CG302
    rmin = persistent_buffer("inplace_kernels.observe.rmin", running_min, torch.float32)  # want: CG301
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
    rmin = persistent_buffer("inplace_kernels.observe_or_fill.rmin", running_min, torch.float32)  # want: CG301
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
    rmin = persistent_buffer("inplace_kernels.observe_fused.rmin", running_min, torch.float32)  # want: CG301
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
