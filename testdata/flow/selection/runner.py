import torch

from backends import AttentionBackend, make_backend


class Runner:
    def __init__(self, name):
        self.backend: AttentionBackend = make_backend(name)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q, k):
        if not self.backend.supports_cuda_graph:
            return
        with torch.cuda.graph(self.graph):
            self.out = self.backend.forward(q, k)
