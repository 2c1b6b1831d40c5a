"""CG202 negative: the lengths object's constructor keeps the static input as it is and allocates a
buffer shaped like it (`torch.zeros_like`); the captured step computes from the kept input itself.

Replays refresh `lens` in place, which the object holds: nothing goes stale. GPU expectation:
clean.
"""
# probe: CG202 negative
import torch


class State:
    pass


class Lens:
    def __init__(self, lens):
        self.lens = lens
        self.scratch = torch.zeros_like(lens)


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def combine(x, meta):
    return x * torch.cumsum(meta.lens, 0)[:, None].to(x.dtype)


def step(st):
    return combine(st.x, Lens(st.lens))


def capture(st):
    g = torch.cuda.CUDAGraph()
    meta = Lens(st.lens)
    with torch.cuda.graph(g):
        st.out = combine(st.x, meta)
    return g
