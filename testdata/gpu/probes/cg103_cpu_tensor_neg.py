"""CG103 negative: `torch.tensor(...)` without a device (a CPU tensor) in the captured step, used on the host.

With the default device the CPU, making the tensor copies nothing to the GPU: capture records no
host-to-device copy. capguard once reported it. GPU expectation: clean.
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
    window = torch.tensor([2, 3, 5])
    width = int(window.prod())
    return st.x[:, :width] * 3.0


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
