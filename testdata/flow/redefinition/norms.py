"""Norms and activations in the style of engines that keep a reference implementation beside the
fused one: the module binds the public name to the reference first and to the fused version below
(a later assignment, a later import: flake8's F811). A function body reads a module global when it
runs, and captured code runs after the import, so it calls the last binding only. A module-level
alias taken before the rebinding holds the binding in effect there: the reference.
"""
import torch


def _reference_rms_norm(x, weight, eps=1e-6):  # context: eager
    # Refuses non-finite inputs, on the host.
    if not torch.isfinite(x).all().item():
        raise FloatingPointError("non-finite input to rms_norm")
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


rms_norm = _reference_rms_norm
reference_rms_norm = rms_norm


def _fused_rms_norm(x, weight, eps=1e-6):  # context: captured
    variance = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(variance + eps)).to(x.dtype) * weight


rms_norm = _fused_rms_norm


def _checked_silu_and_mul(x):  # context: captured
    gate, up = x.chunk(2, dim=-1)
    if gate.abs().max().item() > 1e4:  # want: CG101
        raise FloatingPointError("activation overflow")
    return torch.nn.functional.silu(gate) * up


silu_and_mul = _checked_silu_and_mul
activation = silu_and_mul

from fused_ops import silu_and_mul  # noqa: E402,F811
