"""CG103 negative: per-step outputs kept in a list of `None` placeholders, then copied into the
static output, in the captured step.

Each element put in the list is a device tensor, so `out[i].copy_(parts[i])` copies device memory
to device memory: capture records a device-to-device copy and every replay redoes it from the
step's own results. capguard once read an element of a list as host data (a host-to-device copy,
CG103). GPU expectation: clean.
"""
# probe: CG103 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.out = torch.zeros((2, B, 64), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    parts = [None, None]
    for i in range(2):
        parts[i] = st.x * (i + 2.0)
    for i in range(2):
        st.out[i].copy_(parts[i])
    return st.out


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
