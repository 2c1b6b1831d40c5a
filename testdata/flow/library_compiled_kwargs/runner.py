"""A generator that compiles its decode step with keyword arguments gathered in a dict
(`kwargs = {"mode": "reduce-overhead"}` in one branch, `**kwargs` at the call): a mode that
captures CUDA graphs, so the project is no library and its launchers are not launcher roots."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, out_ptr, b, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) + b, mask=m)


def shift(x):  # context: eager
    b = x.mean().item()
    out = torch.empty_like(x)
    _add_kernel[(triton.cdiv(x.numel(), 256),)](x, out, b, x.numel(), BLOCK=256)
    return out


class Generator:
    def __init__(self, fast):  # context: eager
        if fast:
            kwargs = {"mode": "reduce-overhead"}
        else:
            kwargs = {}
        self.step = torch.compile(self._step, fullgraph=True, **kwargs)

    def _step(self, x):  # context: eager
        return shift(x)


def shift_into(x, out):  # context: claimed
    # graph-safe: no host reads, writes the caller's buffer
    _add_kernel[(triton.cdiv(x.numel(), 256),)](x, out, 1.0, x.numel(), BLOCK=256)
    return out
