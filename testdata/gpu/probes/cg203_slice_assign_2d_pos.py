"""CG203 positive: replay-prep writes a batch's block table into the top-left corner of the padded
table by slice assignment (`block_tables[:bs, :w] = tables`) and never clears the columns past w.

The captured step reads every column: the columns past this batch's width replay a previous batch's
block ids. GPU expectation: stale-read.
"""
# probe: CG203 positive
import torch

ROWS = 64
WIDTH = 8


class State:
    pass


def build(B, dev):
    st = State()
    st.B = B
    st.block_tables = torch.zeros((B, WIDTH), dtype=torch.int64, device=dev)
    st.cache = torch.rand((ROWS, 16), generator=torch.Generator().manual_seed(7)).to(dev)
    st.cache[0] = 0.0  # the null block that padding means
    st.tables = torch.ones((B, WIDTH), dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    w = int(torch.randint(1, WIDTH + 1, (1,), generator=gen))
    st.tables = torch.randint(1, ROWS, (st.B, w), generator=gen).to(st.cache.device)


def prepare(st):
    bs, w = st.tables.shape
    st.block_tables[:bs, :w] = st.tables  # want: CG203


def gather(st):
    rows = st.cache.index_select(0, st.block_tables.flatten())
    return rows.view(st.B, WIDTH, -1).sum(dim=1)


def step(st):
    st.block_tables.zero_()
    prepare(st)
    return gather(st)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = gather(st)
    return g


def replay(st, g):
    prepare(st)
    g.replay()
    return st.out


def reference(st):
    bs, w = st.tables.shape
    padded = torch.zeros_like(st.block_tables)
    padded[:, :w] = st.tables
    rows = st.cache.index_select(0, padded.flatten())
    return rows.view(st.B, WIDTH, -1).sum(dim=1)
