"""A model known only by its declared type, `torch.nn.Module`: an attribute nn.Module does not
define (`inner_model`, `step_plan`) belongs to the project class the value really is, so the call
goes to the project subclasses that define it (hierarchy), while nn.Module's own tensor methods
(`parameters()`) give tensors and `named_modules()` gives modules of unknown classes."""
import torch
from torch import nn


class Planner:
    def plan(self, ids):  # context: captured resolution: hierarchy
        return ids + 1


class Wrapped(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.planner = Planner()

    def inner_model(self):  # context: captured resolution: hierarchy
        return self.inner

    def step_plan(self, ids):  # context: captured resolution: hierarchy
        return self.planner.plan(ids)


def capture_declared(model: nn.Module, graph, ids):
    with torch.cuda.graph(graph):
        inner = model.inner_model()
        ids = model.step_plan(ids)
        for p in model.parameters():
            p.mul_(1.0)
        for _, mod in model.named_modules():
            mod.zero_grad()
    return inner, ids
