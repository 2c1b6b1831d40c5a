"""torch.cuda.make_graphed_callables of a function and of a module (its forward). The sample
arguments are built eagerly, before the capture."""
import torch
from torch import nn


class GraphedMLP(nn.Module):
    def forward(self, x):  # context: captured
        return x * x.max().item()  # want: CG101


def graphed_norm(x):  # context: captured
    return x / x.norm().item()  # want: CG101


def make_sample(x):  # context: eager
    print(x.sum().item())
    return x.clone()


def build(x):
    mlp = torch.cuda.make_graphed_callables(GraphedMLP(), (x,))
    norm = torch.cuda.make_graphed_callables(graphed_norm, (make_sample(x),))
    return mlp, norm
