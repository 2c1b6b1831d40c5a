"""Wrapper direction: a graph runner captures the callable it wraps, and only that. The engine
swaps its model for the runner (self.model = GraphRunner(self.model)), so to a flow-insensitive
analysis the runner's model may be the runner itself; but captured code never calls back into
the function that captures it (that would capture the stream twice), so the runner's __call__,
the outer wrapper that decides between capture and replay, is not captured. The same for a
function that hands a callable to a capture helper: the callable is captured, the rest of the
outer function is not."""
import torch


class GraphRunner:
    def __init__(self, model):
        self.model = model
        self.graphs = {}

    def capture(self, x):  # context: eager
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = self.model(x)
        self.graphs[x.shape[0]] = (graph, x, out)

    def __call__(self, x):  # context: eager
        if x.isnan().any().item():
            raise FloatingPointError("nan input")
        if x.shape[0] not in self.graphs:
            self.capture(x)
        graph, static_x, out = self.graphs[x.shape[0]]
        static_x.copy_(x)
        graph.replay()
        return out


class Decoder(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):  # context: captured
        if x.abs().max().item() > 1e4:  # want: CG101
            raise OverflowError("activation overflow")
        return self.proj(x)


def capture_callable(fn, x):  # context: eager
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn(x)
    return graph, out


def sample_tokens(logits):  # context: captured
    if logits.isinf().any().item():  # want: CG101
        raise FloatingPointError("inf logits")
    return logits.argmax(-1)


def capture_sampler(logits):  # context: eager
    if logits.isnan().any().item():
        raise FloatingPointError("nan logits")
    return capture_callable(sample_tokens, logits)


class Engine:
    def __init__(self, dim):
        self.model = Decoder(dim)

    def enable_graphs(self):  # context: eager
        self.model = GraphRunner(self.model)

    def step(self, x):  # context: eager
        return self.model(x)
