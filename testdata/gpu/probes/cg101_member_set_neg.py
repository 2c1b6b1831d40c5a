"""CG101 negative: a membership test of a device tensor in a set, and of a name in a tuple of
strings, in the captured step.

A set's `in` hashes, and a tensor hashes by its identity: no value is read. A tuple of strings
holds no tensor. GPU expectation: clean.
"""
# probe: CG101 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.tok = torch.zeros(1, dtype=torch.int64, device=dev)
    st.other = torch.zeros(1, dtype=torch.int64, device=dev)
    st.mode = "greedy"
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.tok.copy_(torch.randint(0, 9, (1,), generator=gen))


def step(st):
    seen = st.tok in {st.other, st.tok}
    greedy = st.mode in ("greedy", "argmax")
    return st.x * (2.0 if seen and greedy else 1.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
