"""Issue 18, the per-instance persistent buffer: each layer's scale update
between replays (`self.w_scale = scale.to(torch.float32)`) rebinds what the
graph read. The (unsafe) fix binds a persistent buffer filled with copy_,
keyed per instance: a key per class and site would make both layers share
one buffer, and every layer would read the last layer's scale.
capguard verify expectation (with --unsafe-fixes): original stale-read,
fixed clean.
"""
import torch
from torch import nn


class ScaledLinear(nn.Module):
    def __init__(self, dim, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.eye(dim, device=scale.device))
        self.w_scale = scale.to(torch.float32)  # a plain tensor attribute (a Parameter refuses a tensor)

    def forward(self, x):
        return (x @ self.weight) * self.w_scale

    def update_params(self, scale):
        self.w_scale = scale.to(torch.float32)


LAYERS = []


def load_scales(scale):
    """Runs before capture and before every replay (a weight update)."""
    if not LAYERS:
        LAYERS.extend(ScaledLinear(128, torch.ones(128, device=scale.device)) for _ in range(2))
    LAYERS[0].update_params(scale)
    LAYERS[1].update_params(scale * 2 + 1)


def two_layers(x):
    return LAYERS[1](LAYERS[0](x))


class Runner:
    def capture(self, x, scale):
        load_scales(scale)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = two_layers(x)

    def replay(self, x, scale):
        load_scales(scale)
        self.graph.replay()
        return self.out
