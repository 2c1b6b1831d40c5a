import torch

from rotary.kernels import _add_kernel


def add_checked(a, b):  # context: eager
    out = torch.empty_like(a)
    _add_kernel[(1,)](a, b, out, a.numel(), BLOCK=1024)
    assert torch.equal(out, a + b)
    return out
