"""CG101 positive: a device tensor as a Python truth value (`if (x < 0).any():`) in the captured step.

The branch needs the value on the host: a synchronization under capture. GPU expectation:
capture-error.
"""
# probe: CG101 positive
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
    y = st.x * 2.0
    if (y < 0).any():  # want: CG101
        y = y.abs()
    return y


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
