"""CG202 negative: values computed before the capture region from sizes and constants only (a
softmax scale from the head dimension, a token count from numel) and read inside it. A graph's
input shapes never change between replays, so these are the same on every replay: nothing is
stale. GPU expectation: clean.
"""
# probe: CG202 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.q = torch.zeros((B, 64), device=dev)
    st.k = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.q.copy_(torch.randn(st.q.shape, generator=gen))
    st.k.copy_(torch.randn(st.k.shape, generator=gen))


def step(st):
    head_dim = st.q.shape[-1]
    sm_scale = 1.0 / (head_dim ** 0.5)
    n_rows = st.q.numel() // head_dim
    return torch.softmax(st.q * st.k * sm_scale, dim=-1)[:n_rows]


def capture(st):
    g = torch.cuda.CUDAGraph()
    head_dim = st.q.shape[-1]
    sm_scale = 1.0 / (head_dim ** 0.5)
    n_rows = st.q.numel() // head_dim
    with torch.cuda.graph(g):
        st.out = torch.softmax(st.q * st.k * sm_scale, dim=-1)[:n_rows]
    return g
