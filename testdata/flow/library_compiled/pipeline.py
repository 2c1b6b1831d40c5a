"""A pipeline that captures through torch.compile's CUDA graphs (mode="reduce-overhead") is no
library: library mode stays off, so its kernel launchers are not launcher roots. Claims of
capture safety are still checked."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, mask=m)
    tl.store(out_ptr + i, x * tl.sigmoid(1.702 * x), mask=m)


def gelu(x):  # context: eager
    n = int(x.numel())
    if x.abs().max().item() > 1e4:
        raise ValueError("activation overflow")
    out = torch.empty_like(x)
    _gelu_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
    return out


def gelu_into(x, out):  # context: claimed
    # graph-safe: no host reads, writes the caller's buffer
    _gelu_kernel[(triton.cdiv(x.numel(), 512),)](x, out, x.numel(), BLOCK=512)
    return out


class DenoiseStep(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)
        self.step = torch.compile(self._step, mode="reduce-overhead")

    def _step(self, x):  # context: eager
        return gelu(self.proj(x))
