"""CG204 negative: cg204_lazy_buffer_pos with the step run eagerly into the buffers before the
capture, in the same call: on the call that captures, the buffers hold this step's values.
GPU expectation: clean.
"""
# probe: CG204 negative
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
            for i in range(len(outs)):
                probs_into(self.static_x[:bs] * (i + 1), self.w, outs[i])
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
        return torch.stack(picked, dim=0)


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
