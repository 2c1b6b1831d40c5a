"""`__all__` limits what `from .mlp import *` binds: act is private to this module."""
import torch

__all__ = ["gated_mlp"]


def act(x):  # context: eager
    # A look-alike of activations.act that no star import binds (not in __all__).
    if x.abs().max().item() > 1e4:
        raise FloatingPointError("activation overflow")
    return torch.nn.functional.gelu(x)


def gated_mlp(x):  # context: captured
    if x.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan in mlp input")
    gate, up = x.chunk(2, dim=-1)
    return torch.nn.functional.silu(gate) * up
