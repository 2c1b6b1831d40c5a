import torch


class TinyNet(torch.nn.Module):
    def __init__(self):  # context: eager
        super().__init__()
        self.limit = 4096

    def forward(self, x):  # context: captured resolution: name
        if x.max() > self.limit:  # want: CG101~
            x = x / self.limit
        return x * 2


class DraftNet(torch.nn.Module):
    """In the same module as TinyNet, but no string names it."""

    def forward(self, x):  # context: eager
        if x.min() < 0:
            x = -x
        return x
