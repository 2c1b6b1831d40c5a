"""CG101 positive: `.item()` of a device tensor in the captured step.

Reading a tensor's value on the host synchronizes with the GPU, which a capturing stream forbids.
GPU expectation: capture-error.
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
    scale = st.x.abs().max().item()  # want: CG101
    return st.x / (scale + 1.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
