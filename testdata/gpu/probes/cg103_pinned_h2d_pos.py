"""CG103 positive: `torch.tensor(list, pin_memory=True).to(dev, non_blocking=True)` in the captured step.

Capture records a copy from the pinned host temporary's address; the temporary is freed after the
call and every replay copies whatever that address holds then. GPU expectation: stale-read
(DESIGN.md: diverged in 5 of 5 replays at every batch size).
"""
# probe: CG103 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.dev = dev
    st.x = torch.zeros((B, 64), device=dev)
    st.scales = [1.0] * B  # host-side per-request scales, refreshed every step
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.scales = torch.rand(st.x.shape[0], generator=gen).tolist()


def step(st):
    pin = st.dev != "cpu"
    scales = torch.tensor(st.scales, dtype=torch.float32, pin_memory=pin).to(st.dev, non_blocking=True)  # want: CG103
    return st.x * scales[:, None]


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
