"""CG202 negative: cg202_const_local_pos with the constants kept alive (stored on the state the
program keeps, as a test that captures and then replays keeps its locals): nothing about them
changes between replays and their memory stays theirs, so there is nothing to report.
GPU expectation: clean.
"""
# probe: CG202 negative
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
    bias = torch.linspace(-0.125, 0.125, 64, dtype=torch.float32, device=st.x.device)
    scale = torch.full((64,), 0.5, dtype=torch.float32, device=st.x.device)
    return torch.softmax(st.x + bias, dim=-1) * scale


def capture(st):
    g = torch.cuda.CUDAGraph()
    bias = torch.linspace(-0.125, 0.125, 64, dtype=torch.float32, device=st.x.device)
    scale = torch.full((64,), 0.5, dtype=torch.float32, device=st.x.device)
    st.consts = (bias, scale)
    with torch.cuda.graph(g):
        st.out = torch.softmax(st.x + bias, dim=-1) * scale
    return g
