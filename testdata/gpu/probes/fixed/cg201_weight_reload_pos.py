"""CG201 positive: a weight update after the graphs exist rebinds the tensor the captured forward reads
(`self.scale = scale.to(torch.float32)` in update_weights_from_tensor).

The graph keeps reading the old tensor: replays use the old weights. GPU expectation: stale-read.
"""
# probe: CG201 positive
import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self, dim, dev):
        super().__init__()
        self.scale = torch.ones(dim, device=dev)

    def forward(self, x):
        return x * self.scale

    def update_weights_from_tensor(self, scale):
        self.scale[: scale.shape[0]].copy_(scale)  # want: CG201


class State:
    model: Scaled


def build(B, dev):
    st = State()
    st.model = Scaled(64, dev)
    st.x = torch.zeros((B, 64), device=dev)
    st.new_scale = torch.ones(64, dtype=torch.float64, device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.new_scale = torch.rand(64, generator=gen, dtype=torch.float64).to(st.x.device) + 0.5


def step(st):
    return st.model(st.x)


def capture(st: State):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = st.model(st.x)
    return g


def replay(st: State, g):
    st.model.update_weights_from_tensor(st.new_scale)
    g.replay()
    return st.out


def reference(st):
    st.model.update_weights_from_tensor(st.new_scale)
    return st.model(st.x)
