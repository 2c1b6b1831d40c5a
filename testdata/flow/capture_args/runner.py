import torch

from model import Model


class DecodeGraphs:
    def __init__(self, model: Model, adapters):
        self.model = model
        self.adapters = adapters
        self.graphs = {}

    def capture(self, bs, input_ids):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = self.model.forward(input_ids, cu_seqlen_prefill=None)
            self.model.forward_reassigned(input_ids)
        self.graphs[bs] = g

    def capture_with_adapters(self, bs, input_ids):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = self.model.forward(input_ids, None, self.adapters)
        self.graphs[bs] = g
