"""Captured code binding a fresh tensor to an attribute that code read after a `.replay()`
(CG201): the graph's memory, rebound by every capture (here one per batch size, in a loop). The
read and the binding are matched by the attribute's name and, where the points-to analysis knows
both objects' classes, by class: an error where they share one, nothing where every reader is of
another class, and a warning that names the match where a class is unknown (an object handed in
from code that nothing in the project calls)."""
import torch


class Scores:
    def __init__(self, n, dev):
        self.amax = torch.zeros(n, device=dev)


class Sampler:
    def __init__(self, n, dev):
        self.probs = torch.zeros(n, device=dev)
        self.amax = torch.zeros(n, device=dev)

    def forward(self, logits, extra):  # context: captured
        self.probs = torch.softmax(logits, dim=-1)  # want: CG201 "reads after `.replay()`"
        self.amax = torch.amax(logits, dim=-1)
        extra.hidden = torch.cat([logits, logits], dim=-1)  # want: CG201~ "the name matches"
        return self.probs


class Runner:
    def __init__(self, n, dev):
        self.sampler = Sampler(n, dev)
        self.scores = Scores(n, dev)
        self.inp = torch.zeros((n, 8), device=dev)
        self.graphs = {}

    def capture(self, sizes, extra):
        for bs in sizes:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.sampler.forward(self.inp[:bs], extra)
            self.graphs[bs] = g

    def step(self, bs, holder):
        self.graphs[bs].replay()
        return self.sampler.probs[:bs], self.scores.amax[:bs], holder.hidden
