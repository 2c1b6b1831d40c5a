"""A library whose public API graphs the modules its callers give it through
torch.cuda.make_graphed_callables, and never calls that API itself: the library's own modules
and kernel launchers are what its callers pass, so they are captured by assumption (warnings
that name it), whatever their parameters. make_graphed_callables graphs their backward passes too:
the backward of an autograd Function their forward applies is captured, by assumption. A module the library graphs itself elsewhere is
proved captured there."""
import torch
import triton
import triton.language as tl


@triton.jit
def _norm_kernel(x_ptr):
    i = tl.program_id(0)
    tl.store(x_ptr + i, tl.load(x_ptr + i))


class ClampGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # context: captured
        return x

    @staticmethod
    def backward(ctx, grad):  # context: captured
        if grad.abs().max().item() > 1e4:  # want: CG101~
            grad = grad.clamp(-1e4, 1e4)
        return grad


class RowNorm(torch.nn.Module):
    def forward(self, x, lens):  # context: captured
        rows = lens.tolist()  # want: CG101~
        _norm_kernel[(len(rows),)](x)
        return ClampGrad.apply(x)


def graph_modules(modules, sample_args):  # context: eager
    return torch.cuda.make_graphed_callables(tuple(modules), tuple(sample_args))


class Mean(torch.nn.Module):
    def forward(self, x):  # context: captured
        _norm_kernel[(x.shape[0],)](x)
        return x.mean()


def graph_mean(x):  # context: eager
    return torch.cuda.make_graphed_callables(Mean(), (x,))


def eager_only(x):  # context: eager
    return x.sum()
