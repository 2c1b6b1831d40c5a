"""CG201 negative: each step makes a fresh metadata object, whose own method binds a new tensor to
its attribute (`self.idx = batch.raw - 1`), and hands the object to the helper that replays; the
helper copies the object's tensor into the one the graph captured (`st.meta.idx.copy_(meta.idx)`)
before the replay. The captured step reads `idx` on an object of that class, but not this one: the
binding passes the step's input, and the graph reads the tensor it captured, refreshed in place.
GPU expectation: clean.
"""
# probe: CG201 negative
from dataclasses import dataclass

import torch


@dataclass
class HandedBatch:
    raw: torch.Tensor


class HandedMeta:
    def __init__(self, n, dev):
        self.idx = torch.zeros(n, dtype=torch.int64, device=dev)

    def fill(self, batch: HandedBatch):
        self.idx = batch.raw - 1


class State:
    batch: HandedBatch
    meta: HandedMeta
    x: torch.Tensor


def build(B, dev):
    st = State()
    st.batch = HandedBatch(torch.ones(B, dtype=torch.int64, device=dev))
    st.x = torch.zeros((B, 64), device=dev)
    st.meta = HandedMeta(B, dev)
    st.meta.fill(st.batch)
    return st


def fill(st, gen):
    st.batch.raw.copy_(torch.randint(1, 64, st.batch.raw.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < st.meta.idx[:, None], st.x, 0.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g


def launch(st, g, meta):
    st.meta.idx.copy_(meta.idx)
    g.replay()
    return st.out


def replay(st: State, g):
    meta = HandedMeta(st.batch.raw.shape[0], st.x.device)
    meta.fill(st.batch)
    return launch(st, g, meta)


def reference(st: State):
    # The eager result from a metadata object of its own: refilling st.meta here would rebind the
    # tensor the graph captured between replays.
    meta = HandedMeta(st.batch.raw.shape[0], st.x.device)
    meta.fill(st.batch)
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < meta.idx[:, None], st.x, 0.0)
