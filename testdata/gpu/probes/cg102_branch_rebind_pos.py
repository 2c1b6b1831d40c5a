"""CG102 positive: a value read from a CPU mirror (`int(lens_cpu.max())`) is rebound to a shape only in
a branch the capture does not take (`if st.paged:`), then bounds work in the captured step through
another local (`bound = longest + 0.5`).

The host value reaches the read on the path the capture ran: capture records it once, and every
replay reuses it while the mirror changes with the batch. GPU expectation: stale-read.
"""
# probe: CG102 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.paged = False
    st.lens_cpu = torch.ones(B, dtype=torch.int64)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens_cpu.copy_(torch.randint(1, 64, (st.lens_cpu.shape[0],), generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    longest = int(st.lens_cpu.max())
    if st.paged:
        longest = st.x.shape[1]
    bound = longest + 0.5
    return torch.clamp(st.x * 100.0, max=bound)  # want: CG102


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
