"""CG203 negative: replay-prep copies the batch into the prefix of the padded slot mapping and resets
the tail to a dump slot (`slots[n:].fill_(DUMP)`).

Padded rows write only the dump row, which nobody reads. GPU expectation: clean.
"""
# probe: CG203 negative
import torch

ROWS = 256
DUMP = ROWS - 1


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
    st.batch_slots = torch.randperm(DUMP, generator=gen)[: st.n].to(st.x.device)


def prepare(st):
    st.cache.zero_()
    st.slot_mapping[: st.n].copy_(st.batch_slots)
    st.slot_mapping[st.n:].fill_(DUMP)


def write_cache(st):
    st.cache.index_copy_(0, st.slot_mapping, st.x)
    return st.cache


def step(st):
    prepare(st)
    return write_cache(st).clone()


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = write_cache(st)
    return g


def replay(st, g):
    prepare(st)
    g.replay()
    return st.out[:DUMP]


def reference(st):
    cache = torch.zeros_like(st.cache)
    cache.index_copy_(0, st.batch_slots, st.x[: st.n])
    return cache[:DUMP]
