"""CG101 positive: a device tensor used as a slice bound in the captured step.

`x[: n]` with `n = lens.sum()` (a 0-dim tensor on the GPU) makes Python turn `n` into an int with
`__index__`, which reads its value on the host: the same synchronization as `.item()`, which a
capturing stream forbids, though no host read is written. GPU expectation: capture-error.
"""
# probe: CG101 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    n = st.lens.sum()
    return st.x[:n] * 2.0  # want: CG101


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
