"""CG101 negative: a CPU tensor used as a slice bound in the captured step.

`x[: n]` with `n` a 0-dim tensor on the CPU reads its value with `__index__` too, but from host
memory: nothing waits for the GPU, and capture goes on. The bound is fixed at capture, like any
host number. GPU expectation: clean.
"""
# probe: CG101 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.lens = torch.ones(B, dtype=torch.int64)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    n = st.lens.sum()
    return st.x[:n] * 2.0


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
