"""CG202 negative: cg202_draw_local_pos with the random operand kept alive (stored on the state
the program keeps): it is built from no input, so nothing about it changes between replays, and
its memory stays its own. GPU expectation: clean.
"""
# probe: CG202 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def weight(dev):
    gen = torch.Generator(device=dev).manual_seed(11)
    return (torch.randn(64, 64, generator=gen, device=dev) / 8).contiguous()


def step(st):
    return torch.softmax(st.x @ weight(st.x.device), dim=-1)


def capture(st):
    g = torch.cuda.CUDAGraph()
    gen = torch.Generator(device=st.x.device).manual_seed(11)
    w = (torch.randn(64, 64, generator=gen, device=st.x.device) / 8).contiguous()
    st.w = w
    with torch.cuda.graph(g):
        st.out = torch.softmax(st.x @ w, dim=-1)
    return g
