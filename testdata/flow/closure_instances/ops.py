"""Reference and fused ops timed through perf's helpers. Which of them a capture runs is
decided where each is decorated or passed, not by the helper's own code."""
import torch

from perf import late, profiled, profiled_direct, sweep


@profiled()
def reference_topk(x):  # context: eager
    return x[x > 0].sum().item()


@profiled(iters=2)
def reference_mask(x):  # context: eager
    return x.nonzero()


@profiled(use_graph=True)
def fused_scale(x):  # context: captured
    return torch.relu(x) * 2


@profiled_direct()
def reference_norm(x):  # context: eager
    return x / x.norm().item()


@profiled_direct(use_graph=True)
def fused_norm(x):  # context: captured
    return x * torch.rsqrt((x * x).mean())


def step_eager():  # context: eager
    return torch.ones(4, device="cuda").tolist()


def step_graphed():  # context: captured
    return torch.ones(4, device="cuda") * 3


def kept(x):  # context: captured
    # Applied later through a stored decorator: which instance is not told, so it stays captured.
    return x + 1


def main():  # context: eager
    x = torch.randn(16, device="cuda")
    reference_topk(x)
    reference_mask(x)
    fused_scale(x)
    reference_norm(x)
    fused_norm(x)
    sweep(step_eager, graph=False)
    sweep(step_graphed)
    late(kept)(x)
