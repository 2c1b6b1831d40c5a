"""CG201 positive: between replays a runner grows its staging buffer in place (`self.buf.resize_(...)`)
and copies the new batch into it.

resize_ to a larger size reallocates the storage: the graph keeps reading the old allocation, which the
caching allocator frees and hands out again. GPU expectation: stale-read or fault.
"""
# probe: CG201 positive
import torch


class Runner:
    def __init__(self, B, dev):
        self.cols = 64
        self.buf = torch.zeros((B, self.cols), device=dev)

    def forward(self):
        return self.buf[:, :64] * 2.0

    def prepare(self, x):
        self.cols += 64
        self.buf.resize_(x.shape[0], self.cols)  # want: CG201
        self.buf[:, :64].copy_(x)


class State:
    runner: Runner


def build(B, dev):
    st = State()
    st.runner = Runner(B, dev)
    st.x = torch.zeros((B, 64), device=dev)
    return st


def fill(st, gen):
    st.x = torch.randn((st.x.shape[0], 64), generator=gen).to(st.x.device)


def step(st):
    st.runner.buf[:, :64].copy_(st.x)
    return st.runner.forward()


def capture(st: State):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.out = st.runner.forward()
    return g


def replay(st: State, g):
    st.runner.prepare(st.x)
    g.replay()
    return st.out


def reference(st):
    return st.x * 2.0
