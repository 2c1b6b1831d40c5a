"""A decode layer captured into a CUDA graph, calling the norm module's names from its body."""
import torch

from norms import activation, reference_rms_norm, rms_norm


class DecodeLayer:
    def __init__(self, weight):  # context: eager
        self.weight = weight

    def forward(self, x):  # context: captured
        h = rms_norm(x, self.weight)
        return activation(h)


def check_against_reference(layer, x):  # context: eager
    torch.testing.assert_close(rms_norm(x, layer.weight), reference_rms_norm(x, layer.weight))


class GraphRunner:
    def __init__(self, weight):  # context: eager
        self.layer = DecodeLayer(weight)

    def capture(self, x):  # context: eager
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = self.layer.forward(x)
