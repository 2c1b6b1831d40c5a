"""Adapters attached after the model is built, through modules an outside iterator yields
(`model.named_modules()`): nothing reaches `mod`, but the store `mod.adapters[name] = ...` names
the one class family that sets `self.adapters`, so the adapter's forward is captured, as a guess by
name. Where two unrelated classes set the attribute, nothing is guessed."""
import torch
from torch import nn


class Adapter(nn.Module):
    def __init__(self, rank):
        super().__init__()
        self.rank = rank

    def forward(self, x, out):  # context: captured resolution: name
        return out + x * self.rank


class Linear(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(dim, dim))
        self.adapters = nn.ModuleDict()

    def forward(self, x):  # context: captured
        out = x @ self.weight
        for adapter in self.adapters.values():
            out = adapter(x, out)
        return out


def attach_adapters(model, names, rank):
    for _, mod in model.named_modules():
        if hasattr(mod, "adapters"):
            for name in names:
                mod.adapters[name] = Adapter(rank)


class Hook:
    def run(self, x):  # context: eager
        return x


class Tap:
    def __init__(self):
        self.slots = {}

    def read(self, x):  # context: captured
        return [h.run(x) for h in self.slots.values()]


class Probe:
    def __init__(self):
        self.slots = {}


def install(objs):
    for obj in objs:
        obj.slots["h"] = Hook()
