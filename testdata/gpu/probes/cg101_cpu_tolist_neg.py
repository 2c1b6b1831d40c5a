"""CG101 negative: `.tolist()` and `.item()` of a CPU tensor (made without a device) in the captured step.

A CPU tensor lives in host memory: reading it waits for no GPU work, and the value is a constant of
the program. capguard once reported it. GPU expectation: clean (DESIGN.md).
"""
# probe: CG101 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.cols = torch.tensor([0, 5, 9, 17])
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    cols = st.cols.tolist()
    first = st.cols[0].item()
    # basic slicing with the Python ints (a list index would copy an index tensor to the GPU)
    return st.x[:, cols[1]:cols[3]] * 2.0 + first


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
