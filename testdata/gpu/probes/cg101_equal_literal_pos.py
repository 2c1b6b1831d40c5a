"""CG101 positive: the captured step tests its stop tokens with
`torch.equal(last, torch.tensor([...], device=...))`.

torch.equal returns a Python bool: it reads the comparison back to the host (and the literal is a
host-to-device copy). GPU expectation: capture-error.
"""
# probe: CG101 positive
import torch

STOP = [2, 3]


class State:
    pass


def build(B, dev):
    st = State()
    st.ids = torch.zeros((B, 2), dtype=torch.int64, device=dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.ids.copy_(torch.randint(0, 8, st.ids.shape, generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    y = st.x * 2.0
    if torch.equal(st.ids[0], torch.tensor(STOP, device=st.ids.device)):  # want: CG101 CG103
        y = y + 1.0
    return y


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
