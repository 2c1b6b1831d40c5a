"""CG103 positive: a legacy tensor constructor's host tensor moved to the GPU in the captured step.

`torch.LongTensor(offsets)` builds a tensor from a Python list on the CPU, like `torch.tensor`;
`.to(dev)` then copies pageable host memory to the device, which torch refuses while a stream is
capturing. GPU expectation: capture-error.
"""
# probe: CG103 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.offsets = [0, 16, 32, 48]
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    idx = torch.LongTensor(st.offsets).to(st.x.device)  # want: CG103
    return st.x[:, idx] * 2.0


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
