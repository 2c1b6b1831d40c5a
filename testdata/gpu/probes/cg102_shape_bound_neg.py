"""CG102 negative: a bound taken from tensor metadata (`x.shape[1]`) in the captured step.

A shape is fixed per graph: the value capture records is the value every replay needs.
GPU expectation: clean.
"""
# probe: CG102 negative
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
    width = st.x.shape[1]
    half = st.x[:, : width // 2]
    return torch.clamp(half * 10.0, max=width)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
