"""A runner whose fields also hold guesses: a helper sets attributes under a computed name
(`setattr(obj, name, value)`), so every attribute read of the objects it is given may be any value
set that way, by name only. Such a guess (here a project layer in `self.graph`) says nothing of
what the field holds: `self.graph.replay()` still replays a graph, and the decode loop that calls
it, with the set-up before it, still prepares the replay (a rebinding of a tensor the graph reads
is found there)."""
import torch


class Layer:
    def replay(self):
        return None


def configure(obj, names, value):
    for i, name in enumerate(names):
        setattr(obj, f"{name}_{i}", value)


class Generator:
    def __init__(self, model):
        self.model = model
        self.pos = torch.zeros(1, dtype=torch.long, device="cuda")
        self.tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
        self.out = torch.zeros(1, 1, dtype=torch.long, device="cuda")
        self.graph = None

    def setup(self, n):  # context: replay-prep
        self.pos = torch.arange(n, device="cuda")  # want: CG201~

    def step(self, tok):
        self.tok.copy_(tok)
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out.copy_(self.model(self.tok, self.pos).argmax(-1))
        self.graph.replay()
        return self.out

    def loop(self, tok, n):
        for _ in range(n):
            tok = self.step(tok).clone()
        return tok

    def generate(self, ids, n):
        self.setup(ids.shape[1])
        return self.loop(ids[:, -1:], n)


def build(model):
    gen = Generator(model)
    configure(gen, ["extra"], Layer())
    return gen
