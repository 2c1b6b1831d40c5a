"""Replay prep that stores temporaries: written into a persistent tensor by item assignment
the values are copied and the temporary can go; kept in a dict the captured code reads, it
is the temporary itself the graph would read, freed after the prep returns."""
import torch


class RotaryPrep:
    def __init__(self, max_bs):  # context: eager
        self.pos = torch.zeros(max_bs, 64, device="cuda")
        self.meta = {}
        self.graph = torch.cuda.CUDAGraph()

    def prep(self, positions, freqs):  # context: replay-prep
        rot = freqs.to(torch.float32)
        self.pos[: rot.shape[0]] = rot
        self.meta["scale"] = freqs.to(torch.float16)  # want: CG301

    def run(self, q):  # context: captured
        return q * self.pos + self.meta["scale"]

    def capture(self, q):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.run(q)

    def step(self, positions, freqs):  # context: eager
        self.prep(positions, freqs)
        self.graph.replay()
        return self.out
