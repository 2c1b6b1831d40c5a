"""CG201 positive: replay-prep reallocates a buffer only when the batch needs more room than it has
(`if need > st.kv.shape[0]: st.kv = torch.zeros(need, ...)`), then refreshes it; the captured step
reads it. The buffer grows after capture: each new batch needs one more slot, the guard holds and the buffer is rebound, and the graph keeps reading the one it captured. GPU expectation: stale-read.
"""
# probe: CG201 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int32, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    st.need = B
    st.kv = torch.zeros(B, dtype=torch.int32, device=dev)
    prepare(st)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.need += 1  # a longer batch each step: the buffer grows after capture


def prepare(st):
    if st.need > st.kv.shape[0]:
        st.kv = torch.zeros(st.need, dtype=torch.int32, device=st.x.device)  # want: CG201~
    st.kv[: st.lens.numel()].copy_(st.lens)


def step(st):
    return st.x * st.kv[: st.x.shape[0], None]


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
