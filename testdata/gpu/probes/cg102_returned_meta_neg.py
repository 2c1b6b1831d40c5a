"""CG102 negative: the captured step bounds its work with host numbers that are fixed for the graph: a
helper that returns a shape (`x.shape[1]`), `x.size(0)`, `x.numel()`, and a scale read from the weights
once at load time (`float(w.abs().max())` in build, never updated).

None of them changes between replays. GPU expectation: clean.
"""
# probe: CG102 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.w = torch.linspace(-3.0, 3.0, 64, device=dev)
    st.clip = float(st.w.abs().max())
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def width(x):
    return x.shape[1]


def step(st):
    w = width(st.x)
    rows = st.x.size(0)
    y = torch.clamp(st.x[:rows, : w // 2] * 10.0, max=w, min=-st.x.numel())
    return torch.clamp(y * st.w[: w // 2], min=-st.clip, max=st.clip)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
