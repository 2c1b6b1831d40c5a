"""CG204 negative: the same generator keeps the graph's output in a dict of steps (a reference: it
reads no data) and replays before anything reads it, on the call that captures too. GPU
expectation: clean.
"""
# probe: CG204 negative
import torch


class State:
    pass


class Generator:
    def __init__(self, w, B, dev):
        self.w = w
        self.graph = None
        self.static_x = torch.zeros((B, 64), device=dev)
        self.kept = {}
        self.pos = 0

    def head(self, x):
        return torch.softmax(x @ self.w, dim=-1).amax(-1)

    def step(self, x):
        self.static_x.copy_(x)
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.best = self.head(self.static_x)
        best = self.best
        self.pos += 1
        self.kept[self.pos] = best
        self.graph.replay()
        return self.kept[self.pos].clone()


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.w = torch.randn((64, 64), generator=torch.Generator().manual_seed(7)).to(dev)
    st.gen = Generator(st.w, B, dev)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.softmax(st.x @ st.w, dim=-1).amax(-1)


def capture(st):
    return st.gen


def replay(st, gen):
    return gen.step(st.x)
