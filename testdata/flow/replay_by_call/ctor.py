"""A model's constructor runs a dummy forward through the method that replays, then captures its
graphs with a helper that captures on a cache miss and replays otherwise. A constructor runs
once an object, so that helper captures there, after the dummy forward: the code before the
forward is set-up, not a step between replays. The same call in a later step prepares a replay."""
import torch


class Cache:
    def __init__(self, n):  # context: eager
        self.buf = torch.zeros(n, device="cuda")


class Model:
    def __init__(self, n):  # context: eager
        self.graphs = {}
        self.outs = {}
        self.x = torch.zeros(n, device="cuda")
        self.cache = Cache(n)
        self.cache.buf = torch.ones(n, device="cuda")
        self.forward(n)
        self.graph_for(n)

    def body(self):  # context: captured
        return self.x * self.cache.buf

    def graph_for(self, n):  # context: eager
        if n not in self.graphs:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.outs[n] = self.body()
            self.graphs[n] = g
            return self.outs[n]
        self.graphs[n].replay()
        return self.outs[n]

    def forward(self, n):  # context: eager
        return self.graph_for(n)

    def step(self, n):  # context: eager
        self.cache.buf = torch.full((n,), 2.0, device="cuda")  # want: CG201~
        return self.forward(n)


def serve(steps):  # context: eager
    m = Model(8)
    for n in steps:
        m.step(n)
