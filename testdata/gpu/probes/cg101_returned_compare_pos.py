"""CG101 positive: a helper returns a device tensor (the per-row maximum) and the captured step
compares it with a Python number in an `if` (`if peak[0] > 0:`).

The branch needs the tensor's value on the host: a synchronization under capture. GPU expectation:
capture-error.
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


def row_peak(x):
    return x.amax(dim=-1)


def step(st):
    peak = row_peak(st.x)
    y = st.x * 2.0
    if peak[0] > 0:  # want: CG101
        y = y - peak[:, None]
    return y


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
