"""A module whose submodules are set under computed names (`setattr(self, name, layer)`, as a
model builder or an adapter injector does): reading a name the class itself defines (a method,
nn.Module's `to`) is that definition, not a guess among what the computed stores put there; a
name the class does not define may still be any of them (a guess: a warning)."""
import torch


class HeadAdapter(torch.nn.Module):
    def __call__(self, x):  # context: eager
        return x + x.sum().item()


class ProbeAdapter(torch.nn.Module):
    def __call__(self, x):  # context: captured resolution: name
        return x + x.sum().item()  # want: CG101~


class Head(torch.nn.Module):
    def __init__(self, names):  # context: eager
        super().__init__()
        for name in names:
            setattr(self, name, HeadAdapter())

    def reset(self, x):  # context: captured
        return x * 2


class Decoder:
    def __init__(self, head):  # context: eager
        self.head = head
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):  # context: eager
        with torch.cuda.graph(self.graph):
            y = self.head.reset(x)
            y = self.head.to(y.dtype)
            self.out = y


class Probe:
    def __init__(self, names):  # context: eager
        for name in names:
            setattr(self, name, ProbeAdapter())

    def step(self, x):  # context: eager
        return x


def probe_capture(p, x):  # context: eager
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = p.gate(x)
    return out


def run(names, x):  # context: eager
    return Decoder(Head(names)).capture(x), probe_capture(Probe(names), x)
