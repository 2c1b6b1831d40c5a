"""A served model that hands its decode step to a graph cache, which holds the graph runner: the
model's class matches the graph-protocol convention (it says whether it supports CUDA graphs), but
its forward decides between the graph and eager, through the cache: it runs the capture, and a
capture cannot nest, so it is not captured code. The runner's region is what is captured."""
import torch


class DecodeStep:
    def __init__(self, weight):
        self.weight = weight

    def __call__(self, x):  # context: captured
        return torch.softmax(x @ self.weight, dim=-1)


class StepRunner:
    def __init__(self, step):
        self.step = step
        self.graph = None
        self.out = None

    def trace(self, x):  # context: eager
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = self.step(x)
        torch.cuda.synchronize()

    def replay(self):  # context: eager
        self.graph.replay()
        return self.out


class GraphCache:
    def __init__(self, step):
        self.runners = {}
        self.step = step

    def run(self, x):  # context: eager
        bs = x.shape[0]
        if bs not in self.runners:
            r = StepRunner(self.step)
            r.trace(x)
            self.runners[bs] = r
        return self.runners[bs].replay()


class ServedModel:
    def __init__(self, weight):
        self.step = DecodeStep(weight)
        self.cache = GraphCache(self.step)

    def supports_cuda_graph_compilation(self):
        return True

    def forward(self, x, use_graph=True):  # context: eager
        if not use_graph:
            print("eager step, max logit", x.max().item())
            return self.step(x)
        return self.cache.run(x)
