"""A warm-up loop sets up each batch size's buffers, captures its graph through a helper and
replays it once. The set-up runs before that graph's capture, so it is not preparation between
replays: binding fresh buffers there is how the graph gets its own. Only what runs after the
capture call and before the replay is replay-prep (rebinding a buffer there leaves the graph
reading the old one)."""
import torch


class DecodeModel(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)
        self.kv_indptr = torch.zeros(1, dtype=torch.int32, device="cuda")
        self.positions = torch.zeros(1, dtype=torch.int64, device="cuda")

    def set_up(self, batch_size):  # context: eager
        self.kv_indptr = torch.zeros(batch_size + 1, dtype=torch.int32, device="cuda")
        self.positions = torch.zeros(batch_size, dtype=torch.int64, device="cuda")

    def forward(self, x):  # context: captured
        return self.proj(x) + self.kv_indptr[: x.shape[0]].unsqueeze(-1) + self.positions.unsqueeze(-1)


class Runner:
    def __init__(self, model, batch_sizes):
        self.model = model
        self.batch_sizes = batch_sizes
        self.graphs = {}
        self.inputs = {}
        self.outputs = {}

    def warmup(self, dim):
        def capture_one(bs):
            with torch.cuda.graph(self.graphs[bs]):
                self.outputs[bs] = self.model(self.inputs[bs])

        for bs in self.batch_sizes:
            self.inputs[bs] = torch.zeros(bs, dim, device="cuda")
            self.model.set_up(bs)
            self.graphs[bs] = torch.cuda.CUDAGraph()
            capture_one(bs)
            self.model.positions = torch.arange(bs, device="cuda")  # want: CG201
            self.graphs[bs].replay()


def build(dim):  # context: eager
    runner = Runner(DecodeModel(dim), [1, 2, 4])
    runner.warmup(dim)
    return runner
