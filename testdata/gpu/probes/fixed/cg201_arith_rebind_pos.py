"""CG201 positive: the step's metadata update binds an arithmetic result to the attribute the
captured step reads (`st.meta.idx = st.batch.raw - 1`, `raw` declared `torch.Tensor` on the batch's
dataclass), then a helper replays the graph.

An operator on a tensor makes a new tensor, as a factory does: the graph keeps reading the tensor
bound at capture, which the caching allocator frees and hands out again. GPU expectation:
stale-read (or fault).
"""
# probe: CG201 positive
from dataclasses import dataclass

import torch


@dataclass
class ArithBatch:
    raw: torch.Tensor


class ArithMeta:
    def __init__(self, n, dev):
        self.idx = torch.zeros(n, dtype=torch.int64, device=dev)


class State:
    pass


def build(B, dev):
    st = State()
    st.batch = ArithBatch(torch.ones(B, dtype=torch.int64, device=dev))
    st.x = torch.zeros((B, 64), device=dev)
    st.meta = ArithMeta(B, dev)
    update_meta(st.meta, st.batch)
    return st


def fill(st, gen):
    st.batch.raw.copy_(torch.randint(1, 64, st.batch.raw.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def update_meta(meta: ArithMeta, batch: ArithBatch):
    new_idx = batch.raw - 1
    meta.idx[: new_idx.shape[0]].copy_(new_idx)  # want: CG201~


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
