"""CG201 positive: the captured forward binds a fresh tensor to the module's state
(`self.hidden = torch.cat(...)`), the runner captures one graph per batch size in a loop, and reads
`model.hidden` after `graphs[bs].replay()`.

Each capture rebinds the attribute: after the loop it holds the tensor of the LAST graph captured, so
replaying any other graph leaves the tensor the program reads untouched. GPU expectation: stale-read.
"""
# probe: CG201 positive
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = None

    def forward(self, x):
        self.hidden = torch.cat([x, x * 2.0], dim=-1)  # want: CG201
        return self.hidden.sum(dim=-1)


class Runner:
    def __init__(self, B, dev):
        self.model = Block()
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
        return self.model.hidden


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
    return st.runner.model.hidden


def capture(st: State):
    st.runner.capture([st.B, 1] if st.B > 1 else [1, 1])
    return st.runner.graphs[st.B]


def replay(st: State, g):
    return st.runner.run(st.B)
