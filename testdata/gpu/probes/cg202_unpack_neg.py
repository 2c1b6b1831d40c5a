"""CG202 negative: names the capture region binds again by tuple unpacking (`a, b = st.pairs[0]`) and as a
`for` target are not derived outside it.

The region reads the values it binds itself. capguard once reported them and offered a "safe" fix
that put the dead `torch.randn` into the graph. GPU expectation: clean.
"""
# probe: CG202 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.y = torch.zeros((B, 64), device=dev)
    st.pairs = [(st.x, st.y)]
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.y.copy_(torch.randn(st.y.shape, generator=gen))


def step(st):
    a, b = st.pairs[0]
    out = a * b
    for t in (a, b):
        out = out + t
    return out


def capture(st):
    g = torch.cuda.CUDAGraph()
    a = torch.randn(st.x.shape, device=st.x.device)
    t = st.x.float() * 2.0
    with torch.cuda.graph(g):
        a, b = st.pairs[0]
        out = a * b
        for t in (a, b):
            out = out + t
        st.out = out
    return g
