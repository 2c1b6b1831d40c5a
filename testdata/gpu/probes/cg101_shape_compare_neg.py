"""CG101 negative: the captured step branches on shapes and config numbers, never on tensor data:
`if x.shape[0] > 1:`, `if x.size(1) == HIDDEN:`, `if x.numel() > 0:`, and a helper that returns a row
count.

Shapes are host metadata, fixed for a graph: nothing is read from the device. GPU expectation: clean.
"""
# probe: CG101 negative
import torch

HIDDEN = 64


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, HIDDEN), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def rows(x):
    return x.shape[0]


def step(st):
    y = st.x * 2.0
    if st.x.shape[0] > 1:
        y = y + 1.0
    if st.x.size(1) == HIDDEN:
        y = y * 0.5
    if st.x.numel() > 0 and rows(st.x) >= 1:
        y = y - 1.0
    return y


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
