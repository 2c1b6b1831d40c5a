"""Offline tools: the same module path below another namespace package (tools.ops.norm), the same
function name. Reached only from Runner.calibrate (eager)."""
import torch


def rms_norm(x, eps=1e-6):  # context: eager
    if x.isnan().any().item():
        raise FloatingPointError("nan before norm")
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
