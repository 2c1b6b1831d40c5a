"""CG203 positive: replay-prep copies a batch of n < B rows into the prefix of the padded slot mapping
(`slots[:n].copy_(...)`) and never resets the tail.

The graph was captured at the padded size B: the padded rows replay a previous batch's slots and
write into cache rows of the live batch. GPU expectation: stale-read (at B > 1; B = 1 has no padding).
"""
# probe: CG203 positive
import torch

ROWS = 256


class State:
    pass


def build(B, dev):
    st = State()
    st.B = B
    st.x = torch.zeros((B, 16), device=dev)
    st.slot_mapping = torch.zeros(B, dtype=torch.int64, device=dev)
    st.cache = torch.zeros((ROWS, 16), device=dev)
    st.n = B
    st.batch_slots = torch.arange(B, dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.n = max(1, st.B - 1 - int(torch.randint(0, max(1, st.B // 2), (1,), generator=gen)))
    st.x.copy_(torch.randn(st.x.shape, generator=gen) + 10.0)
    st.batch_slots = torch.randperm(ROWS, generator=gen)[: st.n].to(st.x.device)


def prepare(st):
    st.cache.zero_()
    st.slot_mapping[: st.n].copy_(st.batch_slots)  # want: CG203


def write_cache(st):
    st.cache.index_copy_(0, st.slot_mapping, st.x)
    return st.cache


def step(st):
    prepare(st)
    st.slot_mapping[st.n:].fill_(ROWS - 1)
    return write_cache(st).clone()


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = write_cache(st)
    return g


def replay(st, g):
    prepare(st)
    g.replay()
    return st.out[: ROWS - 1]


def reference(st):
    cache = torch.zeros_like(st.cache)
    cache.index_copy_(0, st.batch_slots, st.x[: st.n])
    return cache[: ROWS - 1]
