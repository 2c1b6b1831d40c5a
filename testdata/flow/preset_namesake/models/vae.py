"""A video autoencoder's attention: named like TensorRT-LLM's attention backends (the preset's
`*:*Attention.forward`), but its hierarchy is known and never reaches the framework (nn.Module
only, through a project base): a namesake, not a captured root."""
import torch
from torch import nn


class _Block(nn.Module):
    pass


class VaeAttention(_Block):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):  # context: eager
        if x.isnan().any().item():
            raise FloatingPointError("nan")
        return self.proj(x)
