"""CG202 positive: a random operand drawn before the capture region from sizes alone
(`(torch.randn(64, 64, generator=...) / 8).contiguous()` on the device) and read inside it, in a
local that dies when the capturing function returns. It is built from no input, so nothing goes
stale; but the graph keeps reading its memory after Python frees it, as with
cg202_const_local_pos. GPU expectation: stale-read. cg202_draw_kept_neg keeps it alive.
"""
# probe: CG202 positive
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
    w = (torch.randn(64, 64, generator=gen, device=st.x.device) / 8).contiguous()  # want: CG202
    with torch.cuda.graph(g):
        st.out = torch.softmax(st.x @ w, dim=-1)
    return g
