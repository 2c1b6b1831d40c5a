"""Slices in a captured step whose bounds are host values read at capture. Slicing a device tensor,
or a list of device tensors, by such a value fixes the graph's shapes to it; slicing a Python list
of numbers (`.tolist()`'s) or a CPU tensor is host work the graph never sees (what the slice
feeds into the graph is reported where it enters)."""
import torch


class Encoder:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(64, device="cuda")
        self.out = None

    def step(self, x):
        n = int(x.sum().item())  # want: CG101
        lens = x.cpu().tolist()  # want: CG101
        runs = lens[: n + 1]
        host = torch.zeros(8)
        head = host[:n]
        y = x[:n]  # want: CG102
        chunks = [x, x * 2]
        z = torch.cat(chunks[:n])  # want: CG102
        return y, z, runs, head

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = self.step(self.x)
