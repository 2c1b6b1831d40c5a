"""CG101 negative: shapes, sizes, numel, dim, len and dtype in conditions and arithmetic under capture.

Metadata lives on the host with the tensor object: reading it synchronizes nothing, and it is fixed
for a graph. GPU expectation: clean.
"""
# probe: CG101 negative
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
    x = st.x
    rows = x.shape[0] + x.size(1) - x.dim() + len(x) - x.numel() // 64
    if x.shape[0] > 2 and x.dtype == torch.float32:
        x = x * 0.5
    assert x.numel() == x.shape[0] * x.shape[1]
    return x + rows


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
