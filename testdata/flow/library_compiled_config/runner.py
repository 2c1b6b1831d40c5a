"""A generator that compiles with the mode a runtime configuration holds (`mode=cfg.mode`): which
mode that is, the code does not say, so nothing shows the project captures, library mode stays on,
and its public launcher is a launcher root."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, out_ptr, b, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) + b, mask=m)


def shift(x):  # context: launcher
    b = x.mean().item()  # want: CG101~
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(x.numel(), 256),)](x, out, b, x.numel(), BLOCK=256)  # want: CG102~
    return out


class Generator:
    def __init__(self, cfg):  # context: eager
        self.step = torch.compile(self._step, mode=cfg.mode)

    def _step(self, x):  # context: eager
        return shift(x)
