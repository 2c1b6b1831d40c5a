"""Issue 18, the right CG201 fix of `X.data = Y`: a weight reset between replays
rebinds the parameter's storage (`norm.weight.data = torch.ones_like(norm.weight)`),
so the graph keeps reading the old storage, which the allocator hands out
again. capguard proves the new tensor has the parameter's shape, dtype, device
and layout (ones_like of it), so `norm.weight.data.copy_(...)` is safe.
capguard verify expectation: original stale-read (the freed weight is poisoned),
fixed clean.
"""
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


NORM = None


def reset_weights(x):
    """Runs before capture and before every replay (a weight reset)."""
    global NORM
    if NORM is None:
        NORM = RMSNorm(x.shape[-1]).to(x.device)
    NORM.weight.data = torch.ones_like(NORM.weight)


def rms_norm(x):
    return NORM(x)


class Runner:
    def capture(self, x):
        reset_weights(x)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = rms_norm(x)

    def replay(self, x):
        reset_weights(x)
        self.graph.replay()
        return self.out
