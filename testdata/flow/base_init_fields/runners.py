"""A base runner keeps the model its subclasses hand to `super().__init__`: `self.model =
model.eval()` binds, for each instance, the model that instance's class passed. The graph
runner captures its own model's forward; the eager runner's model, which reads the host in its
forward, never runs under that capture."""
import torch


class TinyModel(torch.nn.Module):
    def forward(self, x):  # context: captured
        return x * 2


class HostModel(torch.nn.Module):
    def forward(self, x):  # context: eager
        n = int(x.sum().item())
        return x[:n]


class Runner:
    def __init__(self, model: torch.nn.Module, name):
        self.model = model.eval()
        self.name = name


class EagerRunner(Runner):
    def __init__(self):
        super().__init__(HostModel(), "eager")

    def step(self, x):  # context: eager
        return self.model(x)


class GraphRunner(Runner):
    def __init__(self):
        super().__init__(model=TinyModel(), name="graphed")
        self.graph = torch.cuda.CUDAGraph()

    def warmup(self, x):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.model.forward(x)


def serve(x):  # context: eager
    graphed = GraphRunner()
    graphed.warmup(x)
    return EagerRunner().step(x)
