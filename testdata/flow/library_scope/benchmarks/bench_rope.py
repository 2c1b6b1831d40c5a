import torch

from rotary.kernels import _rope_kernel


def time_rope(x, cos, sin, positions):  # context: eager
    n = int(positions.max().item())
    out = torch.empty_like(x[:n])
    _rope_kernel[(1,)](x, cos, sin, out, n, BLOCK=1024)
    return out
