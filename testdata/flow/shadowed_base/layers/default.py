import torch
from torch import nn

from .api import RopeImpl


class RopeImpl(RopeImpl, nn.Module):
    """Takes its interface's name: its base is the imported RopeImpl (the name's binding when this
    statement runs), and the class is a torch module."""

    def __init__(self, base=10000.0):  # context: eager
        super().__init__()
        self.base = base

    def forward(self, x, positions):  # context: captured
        return x * positions


class ScaledRope(RopeImpl):
    """Based on the RopeImpl just defined (a torch module), not on the imported interface: calling an
    instance runs its forward."""

    def forward(self, x, positions):  # context: captured
        if torch.max(positions) + 1 > self.base:  # want: CG101
            x = x / 2
        return super().forward(x, positions)


def build(scaled):  # context: eager
    if scaled:
        return ScaledRope()
    return RopeImpl()
