"""Tensors read out of containers in a captured step. An element of a list, tuple or dict is where
the container's elements are: every one the function puts in it (its display or comprehension, and
what it stores or appends later) on one device. `.item()` of a CPU element waits for no GPU work,
so it is no host sync; copying a CPU element to the GPU under capture is a copy from pageable host
memory, which capture refuses; `torch.cat(parts)` of such a list is a CPU tensor too. A container
whose elements sit on different devices, or that holds what the function cannot place, places
nothing."""
import torch


class Stager:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(256, device="cuda")
        self.out = None

    def step(self, x, sizes):
        bufs = [torch.empty([s], dtype=torch.int32, device="cpu") for s in sizes]
        bufs[0].copy_(torch.ones(4, dtype=torch.int32))
        n = bufs[0].sum().item()
        mirrors = [t.cpu() for t in (x, x)]  # want: CG101
        m = mirrors[1].max().item()
        parts = []
        for s in sizes:
            parts.append(torch.zeros(s))
        whole = torch.cat(parts).sum().item()
        total = whole
        for t in mirrors:
            total += t.item()
        table = {"lo": torch.zeros(4), "hi": torch.ones(4)}
        lo = table["lo"].to(x.device)  # want: CG103
        staged = []
        staged.append(torch.ones(2, device="cpu"))
        staged.append(x[:2])
        k = staged[0].item()  # want: CG101
        return x[:n] * lo[1] * m * k * total  # want: CG102~

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = self.step(self.x, [4, 8])
