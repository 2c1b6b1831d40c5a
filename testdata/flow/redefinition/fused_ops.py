"""The fused activation the norm module imports over its own."""
import torch


def silu_and_mul(x):  # context: eager
    d = x.shape[-1] // 2
    if x.abs().max().item() > 1e4:
        raise FloatingPointError("activation overflow")
    return torch.nn.functional.silu(x[..., :d]) * x[..., d:]
