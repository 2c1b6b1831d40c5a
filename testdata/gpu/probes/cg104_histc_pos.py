"""CG104 positive: `torch.histc(x, bins=16)` with the default range (min = max = 0) in the captured step.

With no range given, histc takes the range from the data: it reads x's minimum and maximum back to
the host, which a capturing stream forbids. GPU expectation: capture-error.
"""
# probe: CG104 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.histc(st.x, bins=16)  # want: CG104


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
