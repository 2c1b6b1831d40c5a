"""CG104 positive: `torch.bincount(ids, minlength=V)` counts tokens in the captured step.

bincount's output length is max(minlength, ids.max() + 1): torch reads the maximum back to the host to
size the result, with or without `minlength`, which a capturing stream forbids. GPU expectation:
capture-error.
"""
# probe: CG104 positive
import torch

VOCAB = 128


class State:
    pass


def build(B, dev):
    st = State()
    st.ids = torch.zeros((B, 16), dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.ids.copy_(torch.randint(0, VOCAB, st.ids.shape, generator=gen))


def step(st):
    counts = torch.bincount(st.ids.flatten(), minlength=VOCAB)  # want: CG104
    return counts.float() / st.ids.numel()


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
