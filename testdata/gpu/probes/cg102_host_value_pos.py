"""CG102 positive: a value read from a CPU mirror (`int(lens_cpu.max())`) bounds work in the captured step.

Capture records the value once; every replay reuses it while the mirror changes with the batch.
GPU expectation: stale-read (DESIGN.md: diverged in 2 of 5 replays at batch 4).
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


def step(st):
    longest = int(st.lens_cpu.max())
    return torch.clamp(st.x * 100.0, max=longest)  # want: CG102


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
