"""An engine's step fills the batch's metadata, then calls a method that replays the graph: the
code before that call runs between replays as the code before a `.replay()` does, but only once
the graph exists (a call before the capture replays nothing), so what it finds are warnings that
name that assumption. The metadata's tensors are declared on a dataclass (`indices:
torch.Tensor`), so `batch.indices - 1` is a new tensor, and binding it to the attribute the
captured code reads leaves the graph reading the old one. An attribute of that name on another
class, and a tensor kept where no captured code reads it, are not the graph's: a finding there
would add a guess to the step's own assumption."""
from dataclasses import dataclass

import torch


@dataclass
class BatchMeta:
    indices: torch.Tensor
    count: int


class LoraIndex:
    def __init__(self, n):  # context: eager
        self.token_indices = torch.zeros(n, dtype=torch.long, device="cuda")
        self.slots = torch.zeros(n, dtype=torch.long, device="cuda")

    def update(self, meta: "BatchMeta"):  # context: replay-prep
        self.token_indices = meta.indices - 1  # want: CG201~

    def update_in_place(self, meta: "BatchMeta"):  # context: replay-prep
        n = meta.indices.shape[0]
        self.slots[:n].copy_(meta.indices - 1)
        self.slots[n:].fill_(0)

    def gather(self, x):  # context: captured
        return x[self.token_indices] + x[self.slots]


class Request:
    """A request's own token history: an attribute of the same name as the index's, on another
    class, which no captured code reads."""

    def __init__(self):  # context: eager
        self.token_indices = torch.zeros(0, dtype=torch.long, device="cuda")

    def extend(self, meta: "BatchMeta"):  # context: replay-prep
        self.token_indices = torch.cat([self.token_indices, meta.indices])

    def staged(self, meta: "BatchMeta"):  # context: replay-prep
        return meta.indices.to(torch.int32)


class Engine:
    def __init__(self, width):  # context: eager
        self.index = LoraIndex(width)
        self.req = Request()
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(width, device="cuda")
        self.out = None

    def capture(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.index.gather(self.x)

    def run_graph(self):  # context: eager
        self.graph.replay()
        return self.out

    def step(self, meta: "BatchMeta"):  # context: eager
        self.index.update(meta)
        self.index.update_in_place(meta)
        self.req.extend(meta)
        self.history = self.req.staged(meta)
        return self.run_graph()


def serve(engine, metas):  # context: eager
    engine.capture()
    for meta in metas:
        engine.step(meta)
