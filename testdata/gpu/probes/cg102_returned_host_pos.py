"""CG102 positive: a helper reads the longest sequence from the CPU mirror and returns it
(`return int(lens_cpu.max())`); the captured step bounds its work with the returned value.

Capture records the value once; every replay reuses it while the mirror changes with the batch.
GPU expectation: stale-read.
"""
# probe: CG102 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.lens_cpu = torch.ones(B, dtype=torch.int64)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    lens = torch.randint(1, 64, (st.lens.shape[0],), generator=gen)
    st.lens_cpu.copy_(lens)
    st.lens.copy_(lens)
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def longest(st):
    return int(st.lens_cpu.max())


def step(st):
    bound = longest(st)
    return torch.clamp(st.x * 100.0, max=bound)  # want: CG102


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
