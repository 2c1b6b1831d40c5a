"""PyTorch modules: calling an nn.Module instance runs its forward (and nothing else of it); the
elements of an nn.ModuleList built by a comprehension (the case a name-based call graph misses),
of an nn.Sequential (calling it runs each element) and of an nn.ModuleDict are reached through
iteration, enumerate, indexing and .values(). The probes ModuleList is read by eager code only."""
import torch
from torch import nn


class DecoderLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.reset_parameters()

    def reset_parameters(self):  # context: eager
        # Called from __init__ only: calling the module runs forward, not this.
        if self.proj.weight.isnan().any().item():
            raise ValueError("bad init")

    def forward(self, x):  # context: captured
        if x.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan")
        return self.proj(x)


class Embedding(nn.Module):
    def forward(self, ids):  # context: captured
        return ids.float() + ids.max().item()  # want: CG101


class RMSNorm(nn.Module):
    def forward(self, x):  # context: captured
        return x / x.norm().item()  # want: CG101


class Scale(nn.Module):
    def forward(self, x):  # context: captured
        return x * x.abs().max().item()  # want: CG101


class LmHead(nn.Module):
    def forward(self, x):  # context: captured
        return x - x.min().item()  # want: CG101


class MtpHead(nn.Module):
    def forward(self, x):  # context: captured
        return x - x.mean().item()  # want: CG101


class Probe(nn.Module):
    def forward(self, x):  # context: eager
        print(x.cpu())
        return x


class Model(nn.Module):
    def __init__(self, dim, n_layers):
        super().__init__()
        self.embed = nn.ModuleList([Embedding()])
        self.layers = nn.ModuleList([DecoderLayer(dim) for _ in range(n_layers)])
        self.final = nn.Sequential(RMSNorm(), Scale())
        self.heads = nn.ModuleDict({"lm": LmHead(), "mtp": MtpHead()})
        self.probes = nn.ModuleList(Probe() for _ in range(2))

    def forward(self, ids):  # context: captured
        x = self.embed[0](ids)
        for i, layer in enumerate(self.layers):
            x = layer(x)
        x = self.final(x)
        logits = [head(x) for head in self.heads.values()]
        return logits[0] + self.heads["mtp"](x)

    def calibrate(self, x):  # context: eager
        for probe in self.probes:
            x = probe(x)
        return x
