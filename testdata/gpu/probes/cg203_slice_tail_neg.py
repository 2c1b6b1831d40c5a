"""CG203 negative: replay-prep writes the batch into the prefix of the padded buffers by slice
assignment and resets the rest by slice assignment too (`slot_mapping[n:] = DUMP`,
`block_tables[:, w:] = 0`).

Padded rows write only the dump row and padded columns read only the null block. GPU expectation:
clean.
"""
# probe: CG203 negative
import torch

ROWS = 256
DUMP = ROWS - 1
WIDTH = 8


class State:
    pass


def build(B, dev):
    st = State()
    st.B = B
    st.x = torch.zeros((B, 16), device=dev)
    st.slot_mapping = torch.zeros(B, dtype=torch.int64, device=dev)
    st.block_tables = torch.zeros((B, WIDTH), dtype=torch.int64, device=dev)
    st.cache = torch.zeros((ROWS, 16), device=dev)
    st.n = B
    st.batch_slots = torch.arange(B, dtype=torch.int64, device=dev)
    st.tables = torch.zeros((B, WIDTH), dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.n = max(1, st.B - 1 - int(torch.randint(0, max(1, st.B // 2), (1,), generator=gen)))
    st.x.copy_(torch.randn(st.x.shape, generator=gen) + 10.0)
    st.batch_slots = torch.randperm(DUMP, generator=gen)[: st.n].to(st.x.device)
    w = int(torch.randint(1, WIDTH + 1, (1,), generator=gen))
    st.tables = torch.randint(1, 16, (st.B, w), generator=gen).to(st.x.device)


def prepare(st):
    st.cache.zero_()
    st.slot_mapping[: st.n] = st.batch_slots
    st.slot_mapping[st.n:] = DUMP
    bs, w = st.tables.shape
    st.block_tables[:bs, :w] = st.tables
    st.block_tables[:, w:] = 0


def run_step(st):
    st.cache.index_copy_(0, st.slot_mapping, st.x)
    return st.cache[:DUMP] + st.block_tables.sum()


def step(st):
    prepare(st)
    return run_step(st).clone()


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = run_step(st)
    return g


def replay(st, g):
    prepare(st)
    g.replay()
    return st.out


def reference(st):
    cache = torch.zeros_like(st.cache)
    cache.index_copy_(0, st.batch_slots, st.x[: st.n])
    return cache[:DUMP] + st.tables.sum()
