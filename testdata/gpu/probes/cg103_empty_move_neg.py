"""CG103 negative: an empty host tensor moved to the GPU in the captured step.

`torch.Tensor().cuda()` and `torch.tensor([]).to(dev)` build tensors with no element on the CPU and
move them: there are no bytes to copy from pageable memory, and capture goes on. (A cache of such a
placeholder, `@lru_cache def _empty(): return torch.Tensor().cuda()`, is a common idiom.)
GPU expectation: clean.
"""
# probe: CG103 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    a = torch.Tensor().cuda()
    b = torch.tensor([]).to(st.x.device)
    return st.x * 2.0 + a.sum() + b.sum()


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
