"""A load hook that nothing in the project reloads: process_weights_after_loading runs when the
weights are loaded, before the graphs are captured, and after them only if the engine reloads
weights, which the project never does here. Rebinding a tensor the captured forward reads there
is a warning that names that assumption; reached from the project's own reload (reload.py,
model.py), the same rebinding is an error."""
import torch
from torch import nn


class Int8Linear(nn.Module):
    def __init__(self, w):  # context: eager
        super().__init__()
        self.w_int8_t = w.t().contiguous()

    def forward(self, x):  # context: captured
        return x @ self.w_int8_t

    def process_weights_after_loading(self):  # context: post-capture
        self.w_int8_t = self.w_int8_t.contiguous()  # want: CG201~


class Int8Runner:
    def __init__(self, w):
        self.layer = Int8Linear(w)
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            self.out = self.layer(x)
