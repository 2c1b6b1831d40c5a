"""CG204 positive: a runner that captures its step on the first call for a batch size and replays
on later calls, reading the output either way. Capture records the kernels without running them, so
the call that captures returns what the output's memory held (the graph pool's, never written for
this step). GPU expectation: stale-read (the first call of each batch size differs from eager).
"""
# probe: CG204 positive
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
        else:
            g.replay()
        return self.out.clone()  # want: CG204


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
