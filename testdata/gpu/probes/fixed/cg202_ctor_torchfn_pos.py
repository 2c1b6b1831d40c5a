"""CG202 positive: the capturing function builds a lengths object before the capture region whose
constructor computes the cumulative lengths with a torch function (`torch.cumsum(lens, 0)`, not a
tensor method), and the captured step reads them.

Replays refresh the static input `lens`; nothing refreshes the object's `starts`. GPU expectation:
stale-read.
"""
# probe: CG202 positive
import torch


class State:
    pass


class Lens:
    def __init__(self, lens):
        self.lens = lens
        self.starts = torch.cumsum(lens, 0)


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def combine(x, meta):
    return x * meta.starts[:, None].to(x.dtype)


def step(st):
    return combine(st.x, Lens(st.lens))


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        meta = Lens(st.lens)  # want: CG202
        st.out = combine(st.x, meta)
    return g
