"""CG104 negative: `torch.histc` with an explicit range (`min=`, `max=`) in the captured step.

The output size is known on the host before the kernels run. GPU expectation: clean.
"""
# probe: CG104 negative
import torch

VOCAB = 128


class State:
    pass


def build(B, dev):
    st = State()
    st.ids = torch.zeros((B, 16), dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.ids.copy_(torch.randint(0, VOCAB, st.ids.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.histc(st.x, bins=16, min=-4.0, max=4.0)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
