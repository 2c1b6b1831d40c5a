"""Library mode through torch.autograd.Function: the public op calls `ScaleFn.apply(x, s)`, which
runs the static `ScaleFn.forward(ctx, x, s)` with the context bound first, so the private launcher
forward calls runs in the launcher context too, and its arguments line up with forward's. The
negatives: `apply` of a class that is no autograd Function runs that class's own `apply`, not its
forward; and a class whose own `apply` overrides the base's."""
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


def _launch_scale(x, scale):  # context: launcher
    if scale.abs().max().item() == 0:  # want: CG101~
        return torch.zeros_like(x)
    out = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, scale, x.numel(), BLOCK=1024)
    return out


class ScaleFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):  # context: launcher
        ctx.save_for_backward(scale)
        return _launch_scale(x, scale)


def scale(x, scale):  # context: launcher
    return ScaleFn.apply(x, scale)


class Pipeline:
    @staticmethod
    def forward(x, scale):  # context: eager
        if scale.abs().max().item() == 0:
            return x
        return x * scale

    @staticmethod
    def apply(x, scale):
        return x * scale


def scale_pipeline(x, scale):
    out = Pipeline.apply(x, scale)
    return _launch_scale(out, scale)
