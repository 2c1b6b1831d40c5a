"""The same with the kept attribute annotated, `self.impl: Any = impl`: an annotation changes no
value, so each instance keeps the op its own class handed to `super().__init__`. The decode
wrapper's graph replays after its planner runs the decode op's plan; the prefill op's plan, which
reads the host and rebinds what a graph reads, never runs before that replay."""
from typing import Any

import torch


class DecodeOp:
    def __init__(self):
        self.starts = torch.zeros(9, dtype=torch.int32, device="cuda")

    def plan(self, lens):  # context: replay-prep
        self.starts[1:].copy_(torch.cumsum(lens, 0))


class PrefillOp:
    def __init__(self):
        self.starts = torch.zeros(9, dtype=torch.int32, device="cuda")

    def plan(self, lens):  # context: eager
        n = int(lens.sum().item())
        self.starts = torch.zeros(n + 1, dtype=torch.int32, device="cuda")

    def run(self, x):  # context: eager
        return x[self.starts[:-1].long()]


class ImplBase:
    def __init__(self, impl: Any, name: str):
        self.impl: Any = impl
        self.name: str = name
        self.prepare(torch.ones(8, dtype=torch.int64, device="cuda"))

    def prepare(self, lens):  # context: replay-prep
        self.impl.plan(lens)


class PrefillImpl(ImplBase):
    def __init__(self):
        super().__init__(PrefillOp(), "prefill")

    def forward(self, x):  # context: eager
        return self.impl.run(x)


class DecodeImpl(ImplBase):
    def __init__(self):
        super().__init__(DecodeOp(), "decode")
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(8, 4, device="cuda")
        with torch.cuda.graph(self.graph):
            self.out = self.x * self.impl.starts[:8, None].float()

    def replay(self, lens):  # context: eager
        self.prepare(lens)
        self.graph.replay()
        return self.out


def serve(x, lens):  # context: eager
    out = DecodeImpl().replay(lens)
    return out, PrefillImpl().forward(x)
