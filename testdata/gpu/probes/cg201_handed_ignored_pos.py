"""CG201 positive: the step's metadata object binds a new tensor to the attribute the captured step
reads (`self.idx = batch.raw - 1`), then is handed to the helper that replays, which takes it but
does not read it: nothing copies the new tensor into the one the graph captured. The graph keeps
reading the tensor bound at capture, which the caching allocator frees and hands out again. GPU
expectation: stale-read (or fault).
"""
# probe: CG201 positive
from dataclasses import dataclass

import torch


@dataclass
class IgnoredBatch:
    raw: torch.Tensor


class IgnoredMeta:
    def __init__(self, n, dev):
        self.idx = torch.zeros(n, dtype=torch.int64, device=dev)

    def fill(self, batch: IgnoredBatch):
        self.idx = batch.raw - 1  # want: CG201~


class State:
    batch: IgnoredBatch
    meta: IgnoredMeta
    x: torch.Tensor


def build(B, dev):
    st = State()
    st.batch = IgnoredBatch(torch.ones(B, dtype=torch.int64, device=dev))
    st.x = torch.zeros((B, 64), device=dev)
    st.meta = IgnoredMeta(B, dev)
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
    g.replay()
    return st.out


def replay(st: State, g):
    st.meta.fill(st.batch)
    return launch(st, g, st.meta)


def reference(st: State):
    # The eager result from a metadata object of its own: refilling st.meta here would rebind the
    # tensor the graph captured between replays.
    meta = IgnoredMeta(st.batch.raw.shape[0], st.x.device)
    meta.fill(st.batch)
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < meta.idx[:, None], st.x, 0.0)
