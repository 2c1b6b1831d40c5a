"""Submodules registered by name (add_module, register_module, setattr with a literal name) are
called through the attribute they bind; torch.compile(fn) and torch.jit.script(fn) return
callables that run fn. A compiled function called only by an eager check, and a submodule only
eager code calls, stay eager."""
import torch
from torch import nn


def fused_gelu(x):  # context: captured
    if x.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan")
    return x * torch.sigmoid(1.702 * x)


def reference_gelu(x):  # context: eager
    if x.isnan().any().item():
        raise FloatingPointError("nan")
    return torch.nn.functional.gelu(x)


class SharedExpert(nn.Module):
    def forward(self, x):  # context: captured
        return x + x.max().item()  # want: CG101


class Router(nn.Module):
    def forward(self, x):  # context: captured
        return x.softmax(-1) * x.sum().item()  # want: CG101


class Gate(nn.Module):
    def forward(self, x):  # context: captured
        return x * x.mean().item()  # want: CG101


class Probe(nn.Module):
    def forward(self, x):  # context: eager
        print(x.cpu())
        return x


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.add_module("shared", SharedExpert())
        self.register_module("router", Router())
        setattr(self, "gate", Gate())
        self.add_module("probe", Probe())
        self.experts = torch.compile(self.run_experts)
        self.act = torch.jit.script(fused_gelu)

    def run_experts(self, x):  # context: captured
        return x * x.min().item()  # want: CG101

    def forward(self, x):  # context: captured
        x = self.gate(x) * self.router(x)
        return self.act(self.shared(x) + self.experts(x))

    def check(self, x):  # context: eager
        ref = torch.compile(reference_gelu)
        return ref(self.probe(x))


class GraphRunner:
    def __init__(self):
        self.moe = MoE()
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        with torch.cuda.graph(self.graph):
            self.out = self.moe(x)
