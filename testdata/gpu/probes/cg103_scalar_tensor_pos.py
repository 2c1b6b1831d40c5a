"""CG103 positive: the sampler wraps its Python temperature in a device tensor
(`torch.tensor(temperature, device=logits.device)`) inside the captured step.

torch.tensor of a Python number on a CUDA device copies it from pageable host memory: a host-to-device
copy that capture forbids. GPU expectation: capture-error.
"""
# probe: CG103 positive
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.logits = torch.zeros((B, 64), device=dev)
    st.temperature = 0.7
    return st


def fill(st, gen):
    st.logits.copy_(torch.randn(st.logits.shape, generator=gen))


def scale(logits, temperature: float):
    t = torch.tensor(temperature, device=logits.device)  # want: CG103
    return logits / t


def step(st):
    return torch.softmax(scale(st.logits, st.temperature), dim=-1)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
