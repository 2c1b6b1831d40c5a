"""CG201 negative: the step's metadata update copies an arithmetic result into the tensor the
captured step reads (`st.meta.idx.copy_(st.batch.raw - 1)`), then a helper replays the graph: the
graph reads the tensor it captured, refreshed in place. GPU expectation: clean.
"""
# probe: CG201 negative
from dataclasses import dataclass

import torch


@dataclass
class ArithCopyBatch:
    raw: torch.Tensor


class ArithCopyMeta:
    def __init__(self, n, dev):
        self.idx = torch.zeros(n, dtype=torch.int64, device=dev)


class State:
    pass


def build(B, dev):
    st = State()
    st.batch = ArithCopyBatch(torch.ones(B, dtype=torch.int64, device=dev))
    st.x = torch.zeros((B, 64), device=dev)
    st.meta = ArithCopyMeta(B, dev)
    update_meta(st.meta, st.batch)
    return st


def fill(st, gen):
    st.batch.raw.copy_(torch.randint(1, 64, st.batch.raw.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def update_meta(meta: ArithCopyMeta, batch: ArithCopyBatch):
    meta.idx.copy_(batch.raw - 1)


def step(st):
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < st.meta.idx[:, None], st.x, 0.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g


def launch(st, g):
    g.replay()
    return st.out


def replay(st, g):
    update_meta(st.meta, st.batch)
    return launch(st, g)


def reference(st):
    update_meta(st.meta, st.batch)
    return step(st)
