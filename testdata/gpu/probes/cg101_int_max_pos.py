"""CG101 positive: `int(x.max())` of a device tensor in the captured step.

int() of a tensor reads its value on the host: a synchronization under capture. capguard once
missed this form (it only knew `.item()`). GPU expectation: capture-error (DESIGN.md).
"""
# probe: CG101 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.lens = torch.ones(B, dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens.copy_(torch.randint(1, 64, st.lens.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    longest = int(st.lens.max())  # want: CG101
    return st.x * longest


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
