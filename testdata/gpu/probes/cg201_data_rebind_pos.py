"""CG201 positive: between replays a runner rebinds its input buffer's data to the new batch
(`self.buf.data = x`) instead of copying into it.

Assigning `.data` swaps the tensor's storage: the graph keeps reading the storage it captured.
GPU expectation: stale-read.
"""
# probe: CG201 positive
import torch


class Runner:
    def __init__(self, B, dev):
        self.buf = torch.zeros((B, 64), device=dev)

    def forward(self):
        return self.buf * 2.0

    def prepare(self, x):
        self.buf.data = x  # want: CG201


class State:
    runner: Runner


def build(B, dev):
    st = State()
    st.runner = Runner(B, dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.x = torch.randn((st.x.shape[0], 64), generator=gen).to(st.x.device)


def step(st):
    st.runner.buf.copy_(st.x)
    return st.runner.forward()


def capture(st: State):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = st.runner.forward()
    return g


def replay(st: State, g):
    st.runner.prepare(st.x)
    g.replay()
    return st.out


def reference(st):
    return st.x * 2.0
