"""A rotary-embedding step graphed with torch.cuda.make_graphed_callables."""
import torch
from torch.cuda import graph as cuda_graph
from torch.cuda import make_graphed_callables


class RotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.dim = dim
        self.scales = [1.0, 2.0, 4.0]
        inv = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv)

    def forward(self, positions, q):
        scale = torch.tensor(self.scales, device=q.device)  # want: CG103
        freqs = positions.float()[:, None] * self.inv_freq[None, :]
        cos, sin = freqs.cos(), freqs.sin()
        q1, q2 = q.chunk(2, dim=-1)
        return torch.cat([q1 * cos - q2 * sin, q1 * sin + q2 * cos], dim=-1) * scale[0]


class Layer(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.rotary = RotaryEmbedding(dim)

    def graph_it(self, positions, q):
        self.rotary = make_graphed_callables(self.rotary, (positions, q))


def capture_with_alias(step, x, lens_cpu):
    g = torch.cuda.CUDAGraph()
    with cuda_graph(g):
        y = step(x)
        n = int(lens_cpu.max())
        out = y[:, :n]  # want: CG102
    return g, out


def capture_span(step, x, host_list):
    g = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    g.capture_begin()
    sl = torch.tensor(host_list, dtype=torch.int32, pin_memory=True).to("cuda", non_blocking=True)  # want: CG103
    y = step(x, sl)
    g.capture_end()
    return g, y
