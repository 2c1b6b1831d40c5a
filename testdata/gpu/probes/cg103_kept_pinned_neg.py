"""CG103 negative: the captured step copies from pinned host buffers the state keeps.

`st.host` and the elements of `st.hosts` are pinned tensors made once, in build; fill writes new
values into them before each replay, as a host-side producer would. Capture records copies from
their addresses, which stay theirs: each replay copies what they hold then. Only a temporary's
address is freed after the call (cg103_pinned_h2d_pos). GPU expectation: clean.
"""
# probe: CG103 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.host = torch.zeros((B, 64), pin_memory=True)
    st.hosts = [torch.zeros((B, 64), pin_memory=True) for _ in range(2)]
    st.x = torch.zeros((B, 64), device=dev)
    st.y = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.host.copy_(torch.randn(st.host.shape, generator=gen))
    st.hosts[1].copy_(torch.randn(st.host.shape, generator=gen))


def step(st):
    st.x.copy_(st.host, non_blocking=True)
    st.y.copy_(st.hosts[1], non_blocking=True)
    return st.x * 2 + st.y


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
