"""CG103 negative: the sampler divides by its Python temperature directly, and by a device tensor built
once before capture.

A Python number operand is a kernel argument (no copy), and the kept tensor is already on the device.
GPU expectation: clean.
"""
# probe: CG103 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.logits = torch.zeros((B, 64), device=dev)
    st.temperature = 0.7
    st.bias = torch.tensor(0.25, device=dev)
    return st


def fill(st, gen):
    st.logits.copy_(torch.randn(st.logits.shape, generator=gen))


def scale(logits, temperature: float, bias):
    return logits / temperature + bias


def step(st):
    return torch.softmax(scale(st.logits, st.temperature, st.bias), dim=-1)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
