"""CG104 negative: masked assignment `x[mask] = v` in the captured step.

A masked fill writes in place and keeps x's size: nothing is sized by the data. capguard once
reported it. GPU expectation: clean (DESIGN.md).
"""
# probe: CG104 negative
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
    neg = y < 0
    y[neg] = 0.0
    return y


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
