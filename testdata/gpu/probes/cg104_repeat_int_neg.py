"""CG104 negative: `repeat_interleave` with an int count, and with tensor repeats and `output_size=`.

An int count (or a given output size) fixes the result's size: no read-back. capguard once reported
the int form. GPU expectation: clean (DESIGN.md).
"""
# probe: CG104 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 8), device=dev)
    st.reps = torch.full((B,), 2, dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    twice = st.x.repeat_interleave(2, dim=1)
    rows = torch.repeat_interleave(st.x, st.reps, dim=0, output_size=2 * st.x.shape[0])
    return twice, rows


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
