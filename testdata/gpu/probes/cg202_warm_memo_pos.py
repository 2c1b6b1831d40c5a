"""CG202 positive: the step keeps offsets derived from the batch's lengths in a first-call memo on its
state (`if not hasattr(st, "starts"): st.starts = torch.cumsum(st.lens, 0)`), and the capturing
function warms the step up on the same state before capturing it.

The warm-up fills the memo from its own batch; under capture the set-up is skipped, so the graph reads
those offsets, and every replay reuses them while the lengths change. GPU expectation: stale-read.
"""
# probe: CG202 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, (st.lens.shape[0],), generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    if not hasattr(st, "starts"):
        st.starts = torch.cumsum(st.lens, 0)
    return st.x * st.starts.unsqueeze(1).float()


def warmup(st):
    pass  # capture() warms up on its own


def capture(st):
    step(st)  # want: CG202~
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g


def reference(st):
    # What the step means for the current batch: offsets of these lengths.
    fresh = State()
    fresh.lens, fresh.x = st.lens, st.x
    return step(fresh)
