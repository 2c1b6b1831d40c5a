"""CG103 positive: `torch.tensor([...], device=...)` of Python data in the captured step.

Building a device tensor from host data copies from a host temporary; a blocking copy from pageable
memory synchronizes, which a capturing stream forbids. GPU expectation: capture-error.
"""
# probe: CG103 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 4), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    w = torch.tensor([0.5, 1.0, 2.0, 4.0], device=st.x.device)  # want: CG103
    return st.x * w


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
