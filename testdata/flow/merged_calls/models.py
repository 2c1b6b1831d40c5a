import torch
from torch import nn


class Dense(nn.Module):
    def forward(self, x):  # context: captured conditional
        return x * 2


class Sparse(nn.Module):
    def forward(self, x):  # context: captured conditional
        # Reached only through the merged calls below: a warning that says so.
        return x.nonzero()  # want: CG104?


class Router(nn.Module):
    def forward(self, x):  # context: captured
        # Also reached by a call with one callee (capture_router): proved.
        return x[x > 0].sum()  # want: CG104


class Head(nn.Module):
    def forward(self, x):  # context: captured conditional
        return x.max().item()  # want: CG101?


class Tail(nn.Module):
    def forward(self, x):  # context: captured
        return x.max().item()  # want: CG101


class Stack(nn.Module):
    def __init__(self, deep):
        super().__init__()
        # A Sequential is called through its elements: not a value no call
        # can take, so the call of self.body below is not merged.
        self.body = nn.Sequential(Tail()) if deep else Router()

    def forward(self, x):  # context: captured
        return self.body(x)


class Gate(nn.Module):
    def forward(self, x):  # context: captured conditional
        # Graphed through a merged make_graphed_callables argument only.
        return x.sum().item()  # want: CG101?
