"""CG103 negative: `torch.tensor([], device=...)`, an empty literal, in the captured step.

An empty literal holds no host data: the tensor has no elements, so nothing is copied from the host
and the capturing stream sees no host-to-device copy. GPU expectation: clean.
"""
# probe: CG103 negative
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
    tail = torch.tensor([], device=st.x.device, dtype=st.x.dtype)
    return torch.cat([st.x.flatten(), tail]) * 2


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
