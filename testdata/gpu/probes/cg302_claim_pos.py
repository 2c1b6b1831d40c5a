"""CG302 positive: a function documented as capture-safe reads a device tensor on the host (`int(x.max())`).

The claim is wrong: capture fails. GPU expectation: capture-error.
"""
# probe: CG302 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def normalize(x):
    """CUDA-graph safe normalization."""  # want: CG302
    peak = float(x.abs().max())  # want: CG101
    return x / (peak + 1.0)


def step(st):
    return normalize(st.x)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = normalize(st.x)
    return g
