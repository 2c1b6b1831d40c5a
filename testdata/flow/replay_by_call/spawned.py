"""A process's entry runs once, as a program's main does: what the function handed to
`Process(target=...)` does before its serving loop (building the engine, converting the weights)
runs before the first replay, not between two. What the loop does before each replay runs between
replays. A test's spawned worker is one too (test_spawned.py, whose worker's
own code holds what would be reported)."""
import multiprocessing

import torch


class Weights:
    def __init__(self, width):  # context: eager
        self.w = torch.ones(width, device="cuda")
        self.scale = torch.ones(width, device="cuda")

    def convert(self):  # context: eager
        self.w = self.w.half().float()

    def rescale(self, s: torch.Tensor):  # context: replay-prep
        self.scale = s * 2  # want: CG201~


class Engine:
    def __init__(self, weights: Weights):  # context: eager
        self.weights = weights
        self.x = torch.zeros(weights.w.shape[0], device="cuda")
        self.graph = None
        self.out = None

    def body(self):  # context: captured
        return self.x * self.weights.w * self.weights.scale

    def step(self):  # context: eager
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out = self.body()
        self.graph.replay()
        return self.out


def run_engine(batches):  # context: eager
    weights = Weights(8)
    weights.convert()
    engine = Engine(weights)
    for s in batches:
        weights.rescale(s)
        engine.step()


def serve(batches):  # context: eager
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=run_engine, args=(batches,))
    proc.start()
    return proc
