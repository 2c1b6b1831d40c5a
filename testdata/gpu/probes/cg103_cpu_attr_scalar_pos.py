"""CG103 positive: a persistent 0-dim CPU tensor attribute moved to the GPU in the captured step.

`self.scale = torch.tensor(hidden ** 0.5)` is made once, on the CPU, and the decode step multiplies
by `self.scale.to(x.device)`. The CPU tensor lives as long as the model: it is no temporary, and
its value never changes. Measured on an H200: capture fails ("Cannot copy between CPU and CUDA
tensors during CUDA graph capture unless the CPU tensor is pinned"). GPU expectation: capture-error.
"""
# probe: CG103 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.scale = torch.tensor(64 ** 0.5, dtype=torch.float32)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return st.x * st.scale.to(st.x.device)  # want: CG103


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
