"""Layers registered under computed names. `setattr(self, f"expert_{i}", ...)` stores under a name
the analysis cannot read, so a later `self.router` or `getattr(self, name)` may or may not be one
of them: what reaches a call only through such a store is a guess, and a hazard there is a
warning naming the call it assumed. A literal `getattr(self, "gate")` is read exactly."""
import torch


class Expert(torch.nn.Module):
    def forward(self, x):  # context: captured resolution: name
        if x.abs().max().item() > 1e4:  # want: CG101~
            x = x.clamp(-1e4, 1e4)
        return x


class Gate(torch.nn.Module):
    def forward(self, x):  # context: captured resolution: resolved
        if x.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan in gate input")
        return x.softmax(-1)


class StatsHook:
    def record(self, x):  # context: captured resolution: name
        return x.sum().item()  # want: CG101~


class MoE(torch.nn.Module):
    def __init__(self, n, names):
        super().__init__()
        setattr(self, "gate", Gate())
        for i in range(n):
            setattr(self, f"expert_{i}", Expert())
        for name in names:
            setattr(self, name, StatsHook())
        self.names = [f"expert_{i}" for i in range(n)]

    def forward(self, x):  # context: captured resolution: resolved
        w = getattr(self, "gate")(x)
        out = x
        for name in self.names:
            out = out + getattr(self, name)(x) * w
        self.monitor.record(out)
        return out


def capture(model, x):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = model(x)
    return g, y


capture(MoE(4, ["monitor"]), torch.zeros(8, device="cuda"))
