"""CG103 positive: a persistent 1-D CPU tensor attribute moved to the GPU in the captured step.

As cg103_cpu_attr_scalar_pos, with a 64-element table made once on the CPU. Measured on an H200:
capture fails, as for the scalar. GPU expectation: capture-error.
"""
# probe: CG103 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.table = torch.linspace(0.5, 1.5, 64)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return st.x * st.table.to(st.x.device)  # want: CG103


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
