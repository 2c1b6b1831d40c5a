"""A module factory that dispatches on a constant kind (guarded returns), and the modules it makes."""
import torch


class Dense:
    def __init__(self, dim):
        self.weight = torch.ones(dim, dim, device="cuda")

    def __call__(self, x):  # context: captured
        return x @ self.weight


class Gated:
    def __init__(self, dim):
        self.weight = torch.ones(dim, dim, device="cuda")

    def __call__(self, x):  # context: captured
        return torch.sigmoid(x) * (x @ self.weight)


class Grouped:
    def __init__(self, dim):
        self.weight = torch.ones(dim, dim, device="cuda")

    def __call__(self, x, splits):  # context: captured
        sizes = splits.tolist()  # want: CG101
        return torch.cat([p @ self.weight for p in x.split(sizes)])  # want: CG102


class Routed:
    def __init__(self, dim):
        self.weight = torch.ones(dim, dim, device="cuda")

    def __call__(self, x):  # context: eager
        # Only the kinds no parametrized test names reach it: its host read is never captured.
        if x.isnan().any().item():
            raise FloatingPointError("nan input")
        return x @ self.weight


def make_module(kind, dim):  # context: eager
    if kind == "dense":
        return Dense(dim)
    if kind == "gated":
        return Gated(dim)
    if kind == "grouped":
        return Grouped(dim)
    if kind == "routed":
        return Routed(dim)
    raise ValueError(kind)
