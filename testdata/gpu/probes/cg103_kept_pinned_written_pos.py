"""CG103 positive: the captured step writes a pinned buffer the state keeps, then copies it.

`st.host` is pinned and made once, in build, as in cg103_kept_pinned_neg; but here the step itself
writes this step's host values into it before the copy. That write is host code: under capture it
runs once, and every replay copies what it left, not this step's values. GPU expectation:
stale-read.
"""
# probe: CG103 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.host = torch.zeros((B, 64), pin_memory=True)
    st.scales = [1.0] * B  # host-side per-request scales, refreshed every step
    st.x = torch.zeros((B, 64), device=dev)
    st.s = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.scales = torch.rand(st.x.shape[0], generator=gen).tolist()


def step(st):
    st.host[:, 0] = torch.tensor(st.scales, dtype=torch.float32)
    st.s.copy_(st.host, non_blocking=True)  # want: CG103
    return st.x * st.s[:, :1]


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
