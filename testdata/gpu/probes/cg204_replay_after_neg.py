"""CG204 negative: cg204_lazy_return_pos with the graph replayed right after it is captured (the
replay is not in an `else`): the call that captures also computes its output. GPU expectation: clean.
"""
# probe: CG204 negative
import torch


class State:
    pass


class Runner:
    def __init__(self, w, B, dev):
        self.w = w
        self.static_x = torch.zeros((B, 64), device=dev)
        self.graphs = {}
        self.out = None

    def run(self, x):
        bs = x.shape[0]
        self.static_x.copy_(x)
        g = self.graphs.get(bs)
        if g is None:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.out = torch.softmax(self.static_x @ self.w, dim=-1)
            self.graphs[bs] = g
        g.replay()
        return self.out.clone()


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.w = torch.randn((64, 64), generator=torch.Generator().manual_seed(7)).to(dev)
    st.runner = Runner(st.w, B, dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.softmax(st.x @ st.w, dim=-1)


def capture(st):
    return st.runner


def replay(st, runner):
    return runner.run(st.x)
