"""CG301 positive: replay-prep builds new metadata from a temporary (`st.meta = Meta(lens.to(torch.int32))`)
and the captured step reads `st.meta.lens`.

The temporary is made outside the capture and kept: the graph reads the one bound at capture, freed
when the next replay-prep replaces it. GPU expectation: fault or stale-read.
"""
# probe: CG301 positive
import torch


class Meta:
    def __init__(self, lens):
        self.lens = lens


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    prepare(st)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def prepare(st):
    st.meta = Meta(st.lens.to(torch.int32))  # want: CG301


def step(st):
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < st.meta.lens[:, None], st.x, 0.0)


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
