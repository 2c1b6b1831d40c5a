"""CG101 positive: a device tensor used as a list's repeat count in the captured step.

`[1.0] * counts[0]` multiplies a list by a 0-dim tensor on the GPU: Python asks the tensor for an
int (`__index__`), a host read that synchronizes, which a capturing stream forbids.
GPU expectation: capture-error.
"""
# probe: CG101 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.counts = torch.full((4,), 2, dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    weights = [1.0] * st.counts[0]  # want: CG101
    return st.x * len(weights)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
