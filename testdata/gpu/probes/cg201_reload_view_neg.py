"""CG201 negative: a weight reload after capture copies the new weights into the captured parameter
(`weight.data.copy_(new)`), then rebinds `.data` to views of the same storage
(`weight.data = weight.data.view(...)`, `.reshape` of itself), and binds a lazily made scale only the
first time (`if self.scale is None:`, `if not hasattr(self, "bias")`), which ran before capture.

Views keep the storage and the first-binding guards bind nothing after capture: the graph reads the new
weights. GPU expectation: clean.
"""
# probe: CG201 negative
import torch
from torch import nn


class Linear(nn.Module):
    def __init__(self, dim, dev):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, device=dev), requires_grad=False)
        self.scale = None

    def forward(self, x):
        return x * self.weight * self.scale + self.bias

    def process_weights_after_loading(self, new):
        self.weight.data.copy_(new)
        self.weight.data = self.weight.data.view(self.weight.shape)
        self.weight.data = self.weight.data.reshape(self.weight.shape)
        if self.scale is None:
            self.scale = torch.full((1,), 0.5, device=self.weight.device)
        if not hasattr(self, "bias"):
            self.bias = torch.zeros_like(self.weight)


class State:
    layer: Linear


def build(B, dev):
    st = State()
    st.layer = Linear(64, dev)
    st.x = torch.zeros((B, 64), device=dev)
    st.new = torch.ones(64, device=dev)
    st.layer.process_weights_after_loading(st.new)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.new = torch.randn(64, generator=gen).to(st.x.device)


def step(st):
    return st.layer(st.x)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = st.layer(st.x)
    return g


def replay(st: State, g):
    st.layer.process_weights_after_loading(st.new)
    g.replay()
    return st.out


def reference(st):
    return st.x * st.new * 0.5
