"""CG301 negative: replay-prep converts the lengths (a temporary) and writes the result into a persistent
buffer by item assignment (`st.lens32[:] = st.lens.to(torch.int32)`), which copies the values: the
temporary is not kept, and the graph reads the persistent buffer. GPU expectation: clean.
"""
# probe: CG301 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.lens32 = torch.zeros(B, dtype=torch.int32, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    prepare(st)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def prepare(st):
    st.lens32[:] = st.lens.to(torch.int32)


def step(st):
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < st.lens32[:, None], st.x, 0.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g


def replay(st, g):
    prepare(st)
    g.replay()
    return st.out


def reference(st):
    prepare(st)
    return step(st)
