"""A host value bound under a condition is baked under that condition only. A parameter that takes a
Python number or a tensor (`bound: float | Tensor`) is read on the host only in the branch that tests
it for a tensor (`if torch.is_tensor(bound): bound = float(bound.max())`), so the read there runs under
capture only if the capture passes a tensor, and so does the bound it leaves for `torch.clamp` after
the `if`: both findings say the condition. A capture that passes a literal rules the branch out, and a
read outside such a branch is unconditional."""
import torch


class Scaler:
    def __init__(self):  # context: eager
        self.buf = torch.zeros(8, device="cuda")
        self.lens = torch.ones(8, device="cuda")

    def scaled(self, x, scale):  # context: captured
        if isinstance(scale, torch.Tensor):
            scale = scale.item()  # want: CG101?
        return x * scale

    def clipped(self, x, bound):  # context: captured
        if torch.is_tensor(bound):
            bound = float(bound.max())  # want: CG101?
        return torch.clamp(x, max=bound)  # want: CG102?

    def fixed(self, x, scale=0.5):  # context: captured
        if not isinstance(scale, (torch.Tensor, float)):
            raise TypeError("scale")
        if isinstance(scale, torch.Tensor):
            scale = scale.item()
        return x * scale

    def always(self, x):  # context: captured
        return x[: int(self.lens.max())]  # want: CG101 CG102


def capture(s: Scaler, x, scale, bound):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = s.scaled(x, scale)
        y = s.clipped(y, bound)
        y = s.fixed(y)
        y = s.always(y)
    return g, y
