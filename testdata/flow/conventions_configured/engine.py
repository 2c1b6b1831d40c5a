"""An engine whose configured graph convention names a switch method (`enable_cuda_graph`) as its
protocol's mark: the user's word, matched as written, so the class's forward is captured (the
built-in conventions take such a switch for no evidence: conventions/switches.py)."""
import torch


class SwitchedModel(torch.nn.Module):
    def enable_cuda_graph(self):  # context: eager
        self.graphed = True

    def forward(self, x):  # context: captured
        return x * x.max().item()  # want: CG101~
