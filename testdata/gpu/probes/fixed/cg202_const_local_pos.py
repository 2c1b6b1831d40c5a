"""CG202 positive: a constant tensor built before the capture region from literals only
(`torch.linspace(-0.125, 0.125, 64, dtype=torch.float32, device=dev)`) and read inside it, in a
local that dies when the capturing function returns. It is not derived from the inputs, yet the
graph reads its memory after Python frees it: the allocator hands it out again and every replay
reads what was written there (measured on an H200: every replay diverged, at every batch size).
cg202_const_kept_neg is the same code with the tensor kept alive.
"""
# probe: CG202 positive
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
    with torch.cuda.graph(g):
        scale = torch.full((64,), 0.5, dtype=torch.float32, device=st.x.device)  # want: CG202
        bias = torch.linspace(-0.125, 0.125, 64, dtype=torch.float32, device=st.x.device)  # want: CG202
        st.out = torch.softmax(st.x + bias, dim=-1) * scale
    return g
