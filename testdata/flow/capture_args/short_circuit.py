"""Short-circuit operands under a capture's constants: a norm helper checks for non-finite values
only where its caller opts in (`error_if_nonfinite and torch.isinf(total).any()`); the captured
call leaves the flag at its default False, so the right operand never runs under capture. A flag
the capture passes from its own argument stays a condition."""
import torch


def clip_norm(grads, max_norm, error_if_nonfinite=False):  # context: captured
    total = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))
    if error_if_nonfinite and torch.isinf(total).any():
        raise RuntimeError("non-finite norm")
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(scale)
    return total


def checked_norm(grads, strict):  # context: captured
    total = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))
    if strict and torch.isnan(total).any():  # want: CG101?
        raise RuntimeError("nan norm")
    return total


def fallback_norm(grads, exact=True):  # context: captured
    total = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))
    return exact or total.item()


class ClipStep:
    def __init__(self, grads):  # context: eager
        self.grads = grads
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, strict):  # context: eager
        with torch.cuda.graph(self.graph):
            self.total = clip_norm(self.grads, 1.0)
            self.checked = checked_norm(self.grads, strict)
            self.fallback = fallback_norm(self.grads)
