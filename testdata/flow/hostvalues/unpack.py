"""Tuple assignments in the host-value model. `lo, hi = int(a.min()), int(a.max())` binds each name to
its own element, as two assignments would: each is a host value read at capture. `n, d = x.shape[0],
k` pairs them the same way (`n` a shape, `d` whatever `k` is). A starred target of a shape (`*lead, d
= x.shape`) is a list of its numbers: metadata, so `int(lead[0])` reads no tensor."""
import torch


class RangeDecoder:
    def forward(self, x, lens_cpu, k):  # context: captured
        lo, hi = int(lens_cpu.min()), int(lens_cpu.max())
        y = torch.clamp(x, min=lo, max=hi)  # want: CG102 CG102
        n, w = x.shape[0], hi + 1
        z = x[:n, :w]  # want: CG102
        *lead, d = x.shape
        rows = int(lead[0])
        flat = x.reshape(rows, d)
        b, *rest = x.shape
        cols = int(rest[0])
        flat2 = x.reshape(b, cols)
        return y, z, flat, flat2


def capture(dec: RangeDecoder, x, lens_cpu):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = dec.forward(x, lens_cpu, 4)
    return g, out
