"""CG202 positive: the capturing function derives `cu = torch.cumsum(lens, 0)` before the capture region
and the captured step reads it.

Replays refresh the static input `lens`; nothing refreshes `cu`. GPU expectation: stale-read.
"""
# probe: CG202 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def combine(x, cu):
    return x * cu[:, None].to(x.dtype)


def step(st):
    return combine(st.x, torch.cumsum(st.lens, 0))


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        cu = torch.cumsum(st.lens, 0)  # want: CG202
        st.out = combine(st.x, cu)
    return g
