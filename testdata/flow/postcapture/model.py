"""Post-capture hooks: weight reloads and updates (process_weights_after_loading,
update_weights_from_tensor, update_params) run after the graphs exist, and so does what they call.
Rebinding there a tensor the captured forward reads leaves the graph reading the old one: CG201
in the post-capture context. The same binding at construction, before any capture, is fine."""
import torch
from torch import nn


class QuantLinear(nn.Module):
    def __init__(self, weight):  # context: eager
        super().__init__()
        self.weight_t = weight.t().contiguous()
        self.scale = torch.ones(1, device=weight.device)

    def forward(self, x):  # context: captured
        return (x @ self.weight_t) * self.scale

    def process_weights_after_loading(self):  # context: post-capture
        self.weight_t = self.weight_t.contiguous()  # want: CG201~

    def update_params(self, scale):  # context: post-capture
        self.scale = scale.to(torch.float32)  # want: CG201~


class Model(nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.proj = QuantLinear(weight)

    def forward(self, x):  # context: captured
        return self.proj(x)

    def load_tensor(self, name, tensor):  # context: post-capture
        if name == "proj.scale":
            self.proj.update_params(tensor)


class ModelRunner:
    def __init__(self, weight):
        self.model = Model(weight)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            self.out = self.model(x)

    def update_weights_from_tensor(self, named_tensors):  # context: post-capture
        for name, tensor in named_tensors:
            self.model.load_tensor(name, tensor)
        self.model.proj.process_weights_after_loading()
