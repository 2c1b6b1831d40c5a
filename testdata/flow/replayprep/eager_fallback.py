"""A runner that falls back to eager execution before it replays: the branch that returns
the eager result never reaches the replay, so what it calls is not replay prep. The prep
that does reach the replay is."""
import torch


class FallbackRunner:
    def __init__(self, model, max_bs):  # context: eager
        self.model = model
        self.static_ids = torch.zeros(max_bs, dtype=torch.int64, device="cuda")
        self.lens = torch.zeros(max_bs, dtype=torch.int32, device="cuda")
        self.graphs = {}

    def step(self, ids):  # context: captured
        return self.model(ids) * self.lens.sum()

    def capture(self, bs):  # context: eager
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = self.step(self.static_ids[:bs])
        self.graphs[bs] = g

    def eager_forward(self, ids, lens):  # context: eager
        self.lens = lens.to(torch.int32)
        return self.model(ids) * self.lens.sum()

    def forward(self, ids, lens, is_prefill):  # context: eager
        graph = self.graphs.get(ids.numel())
        if graph is None or is_prefill:
            with torch.no_grad():
                return self.eager_forward(ids, lens)
        self.static_ids[: ids.numel()].copy_(ids)
        self.lens.copy_(lens)
        self.refresh(lens)
        graph.replay()
        return self.out

    def refresh(self, lens):  # context: replay-prep
        self.lens = lens.to(torch.int32)  # want: CG201~
