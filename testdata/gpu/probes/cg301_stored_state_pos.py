"""CG301 positive: a captured step reads the temporary the previous call stored (`prev = st.prev`) and
stores this call's (`st.prev = x.to(torch.int32)`).

Under capture the read records the tensor bound before the capture (the warm-up's), which the store
frees: every replay reads freed, reused memory. GPU expectation: stale-read.
"""
# probe: CG301 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.prev = torch.zeros((B, 64), dtype=torch.int32, device=dev)
    st.x_host = torch.zeros((B, 64))
    st.prev_host = torch.zeros((B, 64))
    return st


def fill(st, gen):
    st.prev_host = st.x_host
    st.x_host = torch.randint(-50, 50, st.x.shape, generator=gen).float()
    st.x.copy_(st.x_host)


def step(st):
    prev = st.prev
    out = torch.ops.aten.add(st.x, prev)
    st.prev = st.x.to(torch.int32)  # want: CG301
    return out


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g


def reference(st):
    # What the step means: this call's x plus the previous call's.
    return (st.x_host + st.prev_host.int()).to(st.x.device)
