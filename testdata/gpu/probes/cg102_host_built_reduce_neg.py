"""CG102 negative: the captured step bounds its work with `int(torch.prod(torch.tensor(lead)))`, the
product of the leading dimensions of its input's shape computed through a tensor it builds on the
host, and with `int(torch.sum(torch.tensor(widths)))` over a list of shapes. Reading those tensors
back reads the shape's numbers, not device data: no sync, and the bounds do not change between
replays while the data does.

GPU expectation: clean.
"""
# probe: CG102 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 2, 64), device=dev)
    st.w = torch.zeros((B, 16), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.w.copy_(torch.randn(st.w.shape, generator=gen))


def step(st):
    lead = st.x.shape[:-1]
    rows = int(torch.prod(torch.tensor(lead)))
    widths = [st.x.size(-1), st.w.size(-1)]
    total = int(torch.sum(torch.tensor(widths)))
    flat = st.x.reshape(rows, st.x.size(-1))
    return torch.clamp(flat * 100.0, max=float(total))


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
