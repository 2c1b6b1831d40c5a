"""CG204 positive: a generator that captures its sampling head on the first step, keeps the graph's
output under a local alias and stores it into its token history (an item store into a tensor copies
the output's data). On the call that captures no kernel ran: the history takes what the output's
memory held. GPU expectation: stale-read.
"""
# probe: CG204 positive
import torch


class State:
    pass


class Generator:
    def __init__(self, w, B, dev, max_len):
        self.w = w
        self.graph = None
        self.static_x = torch.zeros((B, 64), device=dev)
        self.history = torch.zeros((B, max_len), device=dev)
        self.pos = 0

    def head(self, x):
        return torch.softmax(x @ self.w, dim=-1).amax(-1)

    def step(self, x):
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            self.static_x.copy_(x)
            with torch.cuda.graph(self.graph):
                self.best = self.head(self.static_x)
        else:
            self.static_x.copy_(x)
            self.graph.replay()
        best = self.best
        self.pos += 1
        self.history[:, self.pos] = best  # want: CG204
        return self.history[:, self.pos].clone()


def build(B, dev):
    st = State()
    st.x = torch.zeros((B, 64), device=dev)
    st.w = torch.randn((64, 64), generator=torch.Generator().manual_seed(7)).to(dev)
    st.gen = Generator(st.w, B, dev, 64)
    return st


def fill(st, gen):
    st.x.copy_(torch.randn(st.x.shape, generator=gen))


def step(st):
    return torch.softmax(st.x @ st.w, dim=-1).amax(-1)


def capture(st):
    return st.gen


def replay(st, gen):
    return gen.step(st.x)
