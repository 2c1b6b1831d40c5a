"""Library mode, opt-in flags: code under a flag parameter whose default is False runs only for a
caller that passes it, and the finding says so (`runs only if ... is true`). A flag the function
binds again is no longer what the caller passed; a flag defaulting to True is no opt-in."""
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def exchange(x: torch.Tensor, use_sync=False):  # context: launcher
    out = torch.empty_like(x)
    _copy_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    if use_sync:
        torch.cuda.synchronize()  # want: CG101? "runs only if `use_sync` is true, an opt-in whose default is False"
    return out


def checked(x: torch.Tensor, error_if_nonfinite=False):  # context: launcher
    out = exchange(x)
    if error_if_nonfinite and torch.isinf(out).any():  # want: CG101? "`error_if_nonfinite` is true, an opt-in"
        raise RuntimeError("non-finite")
    return out


def always(x: torch.Tensor, use_sync=True):  # context: launcher
    out = exchange(x)
    if use_sync:
        torch.cuda.synchronize()  # want: CG101~ "if a caller captures this function: capture fails (library mode"
    return out
