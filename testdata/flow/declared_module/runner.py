import torch

from graph_mixin import GraphMixin


class Meta:
    def __init__(self):
        self.buffers = {}


class GraphRunner:
    def __init__(self, model: torch.nn.Module, max_bs: int, dev):
        self.model = model
        self.mixes_graph = isinstance(model, GraphMixin)
        self.meta = Meta()
        self.meta.buffers = model.make_buffers(max_bs, 16, dev)
        self.graph = None

    def capture(self, slots, pages):
        self.graph = torch.cuda.CUDAGraph()
        bufs = self.meta.buffers
        with torch.cuda.graph(self.graph):
            self.out = self.model(bufs["slot_mapping"], bufs["page_table"])

    def __call__(self, slots, pages):
        if self.graph is None:
            self.capture(slots, pages)
        self.model.fill_buffers(self.meta, slots, pages)
        self.model.refresh_stats(self.meta, pages)
        self.graph.replay()
        return self.out


class Engine:
    def __init__(self, registry, name, dev):
        self.model = registry[name](16)
        self.model = GraphRunner(self.model, 8, dev)

    def step(self, slots, pages):
        return self.model(slots, pages)
