"""The engine: it captures its own decoder, so the project is no library."""
import torch

from ops import rms_norm


class Decoder(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))

    def forward(self, x):  # context: captured
        return rms_norm(x, self.weight)


class GraphRunner:
    def __init__(self, hidden, device):
        self.decoder = Decoder(hidden).to(device)
        self.x = torch.zeros(8, hidden, device=device)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self):  # context: eager
        self.decoder(self.x)
        with torch.cuda.graph(self.graph):
            self.out = self.decoder(self.x)

    def step(self, x):  # context: eager
        self.x.copy_(x)
        self.graph.replay()
        return self.out
