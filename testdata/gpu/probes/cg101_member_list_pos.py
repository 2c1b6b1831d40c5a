"""CG101 positive: a membership test of a device tensor in a list of numbers, and in a device tensor,
in the captured step.

A list's `in` compares each element with `==` and reads the answer's truth on the host; a tensor's
`in` (Tensor.__contains__) reads `(t == x).any()`. Either synchronizes, which a capturing stream
forbids. GPU expectation: capture-error.
"""
# probe: CG101 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.tok = torch.zeros(1, dtype=torch.int64, device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))
    st.tok.copy_(torch.randint(0, 9, (1,), generator=gen))


def step(st):
    stop = st.tok in [2, 7]  # want: CG101
    return st.x * (2.0 if stop else 1.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
