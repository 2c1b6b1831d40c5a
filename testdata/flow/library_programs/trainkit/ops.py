import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


def _launch(x, s):  # context: launcher
    out = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, s, x.numel(), BLOCK=1024)
    return out


def scale_rows(x):  # context: launcher
    # re-exported by the package's __init__.py: its API, whoever else calls it
    return _launch(x, float(x.abs().max().item()))  # want: CG101~


def row_stats(x):  # context: launcher
    # not re-exported, but a script beside the package calls it: its API too
    return _launch(x, x.float().std().item())  # want: CG101~


def clip_loss(x):  # context: eager
    # only the package's own training loop runs it
    return _launch(x, x.norm().item())


def summary(x):  # context: launcher
    # an API beside the script: the script's measuring step is used here too
    from .convert_api import measured

    return measured(x)
