"""CG103 negative: legacy tensor constructors given sizes in the captured step.

`torch.cuda.FloatTensor(B, 64)`, `torch.cuda.LongTensor(x.shape)` (a torch.Size is read as sizes)
and `torch.cuda.FloatTensor(64)` allocate on the device, as torch.empty does: nothing is copied
from the host, so capture goes on, and each replay computes what eager does. GPU expectation: clean.
"""
# probe: CG103 negative
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
    acc = torch.cuda.FloatTensor(st.x.shape[0], 64).zero_()
    ones = torch.cuda.LongTensor(st.x.shape).fill_(1)
    bias = torch.cuda.FloatTensor(64).fill_(0.5)
    acc += st.x * ones + bias
    return acc


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
