"""CG102 negative: the captured step reads a CPU mirror (`int(lens_cpu.max())`) only where no graph
uses it, and bounds its work with shapes: in the `else` arm of the same `if` (the arm the capture
takes, `n = blocks * width`), and after a plain rebinding to a shape that every path to the read runs
(`m = st.x.size(1)`).

Neither bound changes between replays while the mirror does. GPU expectation: clean.
"""
# probe: CG102 negative
import torch


class State:
    pass


def build(B, dev):
    st = State()
    st.table = torch.zeros((B, 4), dtype=torch.int64, device=dev)
    st.lens_cpu = torch.ones(B, dtype=torch.int64)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.lens_cpu.copy_(torch.randint(1, 64, (st.lens_cpu.shape[0],), generator=gen))
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    if st.table is None:
        n = int(st.lens_cpu.max())
    else:
        width = st.x.size(1) // 8
        blocks = st.table.size(1)
        n = blocks * width
        y = torch.clamp(st.x * 100.0, max=n)
    m = int(st.lens_cpu.max())
    m = st.x.size(1) // 2
    return torch.clamp(y[:, :m], min=-m)


def capture(st):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = step(st)
    return g
