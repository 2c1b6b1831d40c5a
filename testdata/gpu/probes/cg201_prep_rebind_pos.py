"""CG201 positive: replay-prep rebinds the metadata the captured step reads (`meta.lens = lens.to(torch.int32)`).

The graph keeps reading the tensors bound at capture, which the caching allocator frees and hands
out again. GPU expectation: fault or stale-read (DESIGN.md: CUDA error 717 or stale data).
"""
# probe: CG201 positive
import torch


class Meta:
    pass


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    st.meta = Meta()
    prepare(st)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def prepare(st):
    st.meta.lens = st.lens.to(torch.int32)  # want: CG201


def step(st):
    cols = torch.arange(64, device=st.x.device)[None, :]
    return torch.where(cols < st.meta.lens[:, None], st.x, 0.0)


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
