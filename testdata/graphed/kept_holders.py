"""A tensor built before the capture region is kept alive where a container holding it is kept:
a dict or tuple of the graph's inputs built after the region and stored beside the graph keeps
them (no CG202); a value computed from the input and stored keeps only that new value."""
import torch


class StateRunner:
    def __init__(self, model):
        self.model = model
        self.graphs = {}

    def capture_kept_in_dict(self, bs):
        input_ids = torch.zeros(bs, dtype=torch.long, device="cuda")
        state = torch.zeros(bs, 16, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = self.model(input_ids, state)
        graph_dict = {"input_ids": input_ids, "state": state, "logits": logits}
        entry = (graph, graph_dict)
        self.graphs[bs] = entry

    def capture_copy_stored(self, bs):
        positions = torch.zeros(bs, dtype=torch.long, device="cuda")  # want: CG202
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = self.model(positions, None)
        shifted = positions.float()
        self.graphs[bs] = (graph, shifted, logits)
