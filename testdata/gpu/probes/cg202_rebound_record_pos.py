"""CG202 positive: the capturing function stores the static length buffer for its replay prep,
then rebinds the same name to a record whose constructor computes the prefix sums into a buffer of
its own (`torch.cumsum(..., out=)`), and the captured step reads them. The store keeps the buffer,
which replays refresh; nothing refreshes the record's sums. GPU expectation: stale-read.
"""
# probe: CG202 positive
import torch


class State:
    pass


class Prefix:
    def __init__(self, lens):
        self.lens = lens
        cu = torch.zeros(lens.shape[0] + 1, dtype=torch.int64, device=lens.device)
        torch.cumsum(self.lens, 0, out=cu[1:])
        self.cu = cu


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def combine(x, rec):
    return x * rec.cu[1:, None].to(x.dtype)


def step(st):
    return combine(st.x, Prefix(st.lens))


def capture(st):
    g = torch.cuda.CUDAGraph()
    lens = st.lens
    st.inputs = {"lens": lens, "x": st.x}
    lens = Prefix(lens)  # want: CG202
    with torch.cuda.graph(g):
        st.out = combine(st.x, lens)
    return g
