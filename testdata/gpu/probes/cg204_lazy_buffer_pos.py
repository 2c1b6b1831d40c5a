"""CG204 positive: a runner that writes its step's result into persistent buffers through a helper
and, on the call that captures, gathers them without a replay. The buffers hold what they held
before (zeros on the first call): capture ran nothing. GPU expectation: stale-read.
"""
# probe: CG204 positive
import torch


class State:
    pass


def probs_into(x, w, out):
    out.copy_(torch.softmax(x @ w, dim=-1))


class Runner:
    def __init__(self, w, B, dev, heads):
        self.w = w
        self.static_x = torch.zeros((B, 64), device=dev)
        self.bufs = [torch.zeros((B, 64), device=dev) for _ in range(heads)]
        self.graphs = {}

    def run(self, x):
        bs = x.shape[0]
        self.static_x[:bs].copy_(x)
        outs = [b[:bs] for b in self.bufs]
        g = self.graphs.get(bs)
        if g is None:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for i in range(len(outs)):
                    probs_into(self.static_x[:bs] * (i + 1), self.w, outs[i])
            self.graphs[bs] = g
        else:
            g.replay()
        picked = []
        for i in range(len(outs)):
            picked.append(outs[i][:bs])
        return torch.stack(picked, dim=0)  # want: CG204


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.w = torch.randn((64, 64), generator=torch.Generator().manual_seed(7)).to(dev)
    st.runner = Runner(st.w, B, dev, 2)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.stack([torch.softmax((st.x * (i + 1)) @ st.w, dim=-1) for i in range(2)], dim=0)


def capture(st):
    return st.runner


def replay(st, runner):
    return runner.run(st.x)
