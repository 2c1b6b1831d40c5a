"""CG201 negative: the captured forward writes its result into a buffer the module allocated once
(`self.hidden[:n].copy_(torch.cat(...))`), the runner captures one graph per batch size in a loop, and
reads `model.hidden` after `graphs[bs].replay()`.

Every graph writes the same persistent buffer: after a replay it holds that replay's result.
GPU expectation: clean.
"""
# probe: CG201 negative
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, B, dev):
        super().__init__()
        self.hidden = torch.zeros((B, 128), device=dev)

    def forward(self, x):
        n = x.shape[0]
        self.hidden[:n].copy_(torch.cat([x, x * 2.0], dim=-1))
        return self.hidden[:n].sum(dim=-1)


class Runner:
    def __init__(self, B, dev):
        self.model = Block(B, dev)
        self.x = torch.zeros((B, 64), device=dev)
        self.graphs = {}

    def capture(self, sizes):
        for bs in sizes:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.model(self.x[:bs])
            self.graphs.setdefault(bs, g)

    def run(self, bs):
        self.graphs[bs].replay()
        return self.model.hidden[:bs]


class State:
    runner: Runner


def build(B, dev):
    st = State()
    st.B = B
    st.runner = Runner(B, dev)
    return st


def fill(st, gen):
    st.runner.x.copy_(torch.randn(st.runner.x.shape, generator=gen))


def step(st):
    st.runner.model(st.runner.x)
    return st.runner.model.hidden[: st.B]


def capture(st: State):
    st.runner.capture([st.B, 1] if st.B > 1 else [1, 1])
    return st.runner.graphs[st.B]


def replay(st: State, g):
    return st.runner.run(st.B)
