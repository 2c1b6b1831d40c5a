"""CG102 positive: a value computed by host arithmetic from a CPU mirror's data (`top = max(longest + 1,
4) * 2` after `longest = int(lens_cpu.max())`) bounds work in the captured step.

Capture records the derived value once, as it records the read it comes from; every replay reuses it
while the mirror changes with the batch. GPU expectation: stale-read.
"""
# probe: CG102 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.lens_cpu = torch.ones(B, dtype=torch.int64)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens_cpu.copy_(torch.randint(1, 64, (st.lens_cpu.shape[0],), generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    longest = int(st.lens_cpu.max())
    top = max(longest + 1, 4) * 2
    return torch.clamp(st.x * 100.0, max=top)  # want: CG102


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
