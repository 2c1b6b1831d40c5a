"""Other accelerators' graphs: torch.npu.graph with an NPUGraph (Ascend, torch_npu), and Habana's
wrap_in_hpu_graph (the module's forward is captured)."""
import torch
import torch_npu  # noqa: F401  (registers torch.npu)
from habana_frameworks.torch.hpu import wrap_in_hpu_graph
from torch import nn


def npu_step(x):  # context: captured
    return x * x.max().item()  # want: CG101


class HpuDecoder(nn.Module):
    def forward(self, x):  # context: captured
        return x * x.min().item()  # want: CG101


def capture_npu(x):
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        out = npu_step(x)
    return g, out


def build_hpu():
    return wrap_in_hpu_graph(HpuDecoder())
