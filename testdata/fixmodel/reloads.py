"""Fix model, patterns (c) and (e) in post-capture weight updates and
replay-prep: `.data = y` becomes a copy only where y is proved to have the
parameter's shape, dtype and layout; a persistent buffer stored on a layer
is keyed per instance; a buffer that one site would share between arguments
or entries is no fix.
"""
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    def process_weights_after_loading(self):
        self.weight.data = torch.ones_like(self.weight)  # want: CG201~[safe] "binds a new tensor"


class PackedLinear(nn.Module):
    def __init__(self, weight, scale):
        super().__init__()
        self.weight = nn.Parameter(weight)
        self.w_scale = nn.Parameter(scale)

    def forward(self, x):
        return (x @ self.weight) * self.w_scale

    def process_weights_after_loading(self):
        self.weight.data = self.weight.data.t().contiguous()  # want: CG201~[none]
        self.w_scale = self.w_scale.to(torch.float32)  # want: CG201~[none]

    def update_params(self, scale):
        self.w_scale = scale.to(torch.float32)  # want: CG201~[unsafe] "binds a new tensor"


class Model(nn.Module):
    def __init__(self, weight, scale):
        super().__init__()
        self.norm = RMSNorm(weight.shape[0])
        self.layers = nn.ModuleList([PackedLinear(weight, scale) for _ in range(2)])

    def forward(self, x):
        x = self.norm(x)
        for layer in self.layers:
            x = layer(x)
        return x


class Metadata:
    pass


class AttnBackend:
    def __init__(self):
        self.meta = Metadata()

    def forward(self, q):
        return q[:, : self.meta.lens.shape[0]] * self.meta.lens.float() + self.meta.pages[0].float().sum()

    def init_forward_metadata_replay_cuda_graph(self, seq_lens, indices, indptr):
        self.meta.lens = _as_i32(seq_lens)
        pages = []
        for t in (indices, indptr):
            pages.append(t.to(torch.int32))  # want: CG301
        self.meta.pages = pages


def _as_i32(t):
    return t.to(torch.int32)  # want: CG301


class Runner:
    def __init__(self, weight, scale):
        self.model = Model(weight, scale)
        self.attn = AttnBackend()
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x, q):
        with torch.cuda.graph(self.graph):
            self.out = self.model(x)
            self.attn_out = self.attn.forward(q)
