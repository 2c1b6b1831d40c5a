"""Replay prep that converts a tensor and binds the result to state the captured step reads.
A conversion to a tensor's own dtype (`.to(torch.int32)` of an int32 tensor, `.float()` of a
float32 one, `.contiguous()` of a contiguous one, `.cuda()` of a CUDA one, `.to(device=d,
dtype=t)` of a tensor on d with dtype t) returns the tensor itself: then the binding holds the tensor converted, not a new one. That is a new tensor on every
step only where the prep made it (arithmetic, a gather, a factory, a local bound to one): CG201.
Converting an argument or another object's tensor binds, when the conversion is a no-op, the
caller's tensor, as `self.lens = lens` would: a warning that names the dtype it assumes, unless
the project allocates that attribute everywhere with another dtype (then the conversion copies)."""
import torch


class Source:
    def __init__(self, n):
        self.counts = torch.zeros(n, dtype=torch.int64, device="cuda")
        self.table = torch.zeros(n, 8, dtype=torch.int64, device="cuda")


class Runner:
    def __init__(self, n):
        self.lens = torch.zeros(n, dtype=torch.int32, device="cuda")
        self.starts = torch.zeros(n, dtype=torch.int32, device="cuda")
        self.rows = torch.zeros(n, 8, dtype=torch.int32, device="cuda")
        self.scale = torch.ones(n, device="cuda")
        self.bias = torch.zeros(n, device="cuda")
        self.graph = torch.cuda.CUDAGraph()

    def step(self, x):  # context: captured
        return x * self.scale + self.lens + self.starts + self.rows.sum(1) + self.bias

    def capture(self, x):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.step(x)

    def prepare(self, lens, idx, src, scale, host_bias):  # context: replay-prep
        self.lens = lens.to(torch.int32)  # want: CG201~ "assumes `lens` is not already torch.int32"
        self.lens = lens.to(device=lens.device, dtype=torch.int32)  # want: CG201~ "is not already torch.int32 on that device"
        self.starts = lens.cumsum(0).to(device="cuda", dtype=torch.int32)  # want: CG201
        self.starts = lens.cumsum(0).to(torch.int32)  # want: CG201
        self.rows = src.table[idx[:4]].to(torch.int32)  # want: CG201
        shifted = lens + 1
        self.lens = shifted.to(torch.int32)  # want: CG201
        self.lens = src.counts.to(torch.int32)  # want: CG201
        self.scale = scale.float()  # want: CG201~ "is not already torch.float32"
        self.bias = host_bias.cuda()  # want: CG201~ "is not on the GPU already"

    def replay(self, lens, idx, src, scale, host_bias):  # context: eager
        self.prepare(lens, idx, src, scale, host_bias)
        self.graph.replay()
        return self.out


class Planner:
    def __init__(self, n):
        self.indptr = torch.zeros(n + 1, dtype=torch.int32, device="cuda")
        self.graph = torch.cuda.CUDAGraph()

    def run(self, x):  # context: captured
        return x + self.indptr[1:]

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            self.out = self.run(x)

    def plan(self, lens, indptr=None, paged=False):  # context: replay-prep
        if paged:
            indptr = torch.zeros(lens.numel() + 1, dtype=torch.int64)
            indptr[1:] = torch.cumsum(lens, 0)
            indptr = indptr.to(lens.device)
        self.indptr = indptr.to(torch.int32)  # want: CG201

    def replay(self, lens):  # context: eager
        self.plan(lens, paged=True)
        self.graph.replay()
