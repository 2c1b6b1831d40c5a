"""CG104 positive: boolean-mask indexing `x[x > 0]` in the captured step.

The result's size is the count of true elements: reading it back to size the result synchronizes,
which a capturing stream forbids. GPU expectation: capture-error.
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
    keep = st.x > 0
    return st.x[keep].sum()  # want: CG104


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
