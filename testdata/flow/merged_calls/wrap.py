import torch

from models import Dense, Gate, Head, Router, Sparse, Stack


class Wrapper(torch.nn.Module):
    """Wraps whatever model it is given: one abstract object for every wrapper."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x):  # context: captured
        return self.module(x)


def wrap(models):
    return [Wrapper(m) for m in models]


def graph_callables(callables, sample):  # context: eager
    # `x = (x,)`: the parameter's tuple and its elements meet in one set.
    if not isinstance(callables, tuple):
        callables = (callables,)
    graphs = []
    for func in callables:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            func(sample)
        graphs.append(g)
    return graphs


def train_pipeline():  # context: eager
    # Another caller's models, and a pipeline's stages as a list of lists.
    return wrap([Dense(), Sparse()]) + wrap([[Dense()]])


def capture_wrapped(x):  # context: eager
    # This capture wraps a Router only, but the wrapper's field holds what
    # every caller of wrap() passed, a list among them: the call through it
    # is merged, and the other models' forwards are conditions.
    wrapped = wrap([Router()])[0]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        wrapped(x)
    return g


def capture_router(x):  # context: eager
    router = Router()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        router(x)
    return g


def capture_stack(x):  # context: eager
    stack = Stack(deep=x.dim() > 2)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        stack(x)
    return g


def capture_tuple(x):  # context: eager
    # Every callable here is one some caller passes, but the set at `func`
    # cannot tell them from its tuples: each is a condition (the cost of
    # the rule, said in the warning).
    return graph_callables((Dense(), Head()), x) + graph_callables(Stack(True), x)


def graph_each(modules, x):  # context: eager
    # The same `x = [x]` at make_graphed_callables: what it graphs is merged.
    if not isinstance(modules, list):
        modules = [modules]
    return [torch.cuda.make_graphed_callables(m, (x,)) for m in modules]


def graph_all(x):  # context: eager
    return graph_each([Gate(), Dense()], x) + graph_each(Sparse(), x)
