"""CG102 positive: one tuple assignment reads two bounds from a CPU mirror's data (`lo, hi =
int(lens_cpu.min()), int(lens_cpu.max())`), and the captured step clamps with them.

Capture records both values once; every replay reuses them while the mirror changes with the batch.
GPU expectation: stale-read.
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
    lo, hi = int(st.lens_cpu.min()), int(st.lens_cpu.max())
    return torch.clamp(st.x * 100.0, min=-hi, max=lo + hi)  # want: CG102 CG102


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
