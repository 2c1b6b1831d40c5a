import torch

from rotary.kernels import _rope_kernel


def rope_demo(x, cos, sin):  # context: eager
    keep = torch.tensor([0, 1, 2], device=x.device)
    out = torch.empty_like(x)
    _rope_kernel[(1,)](x[keep], cos, sin, out, x.numel(), BLOCK=1024)
    return out
