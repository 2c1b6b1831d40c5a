"""An engine that captures in C++ (or in a framework it hands its model to) is no library: its
graph-mode setting (EngineConfig.enforce_eager, passed on as the runtime's use_cuda_graph)
shows that it captures of its own, so library mode stays off and its kernel launchers are not
launcher roots (the runtime decides what it captures; configure an entry point for that).
Claims of capture safety are still checked."""
from dataclasses import dataclass

import torch
import triton
import triton.language as tl


@dataclass
class EngineConfig:
    max_batch: int = 64
    enforce_eager: bool = False


@triton.jit
def _scale_kernel(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=m) * tl.load(s_ptr), mask=m)


def scale_rows(x, scale):  # context: eager
    if scale.isnan().any().item():
        raise ValueError("nan scale")
    out = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(x.numel(), 256),)](x, scale, out, x.numel(), BLOCK=256)
    return out


def fused_scale(x, scale, out):  # context: claimed
    """Capture-safe: writes into the caller's persistent buffer."""
    _scale_kernel[(triton.cdiv(x.numel(), 256),)](x, scale, out, x.numel(), BLOCK=256)
    return out


def start(runtime, cfg: EngineConfig):  # context: eager
    return runtime.launch(scale_rows, use_cuda_graph=not cfg.enforce_eager)
