"""A call's arguments run before the call: `self.loop(self.prefill(ids), n)` runs prefill before the
loop that replays the graph, so prefill prepares that replay as the statements before the call do.
Its rebinding of a tensor the graph reads is found there (a warning: it assumes the generation
comes after the graph is captured). An argument that calls nothing prepares nothing."""
import torch


class Decoder:
    def __init__(self, model):
        self.model = model
        self.pos = torch.zeros(1, dtype=torch.long, device="cuda")
        self.tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
        self.out = torch.zeros(1, 1, dtype=torch.long, device="cuda")
        self.graph = None

    def prefill(self, ids):  # context: replay-prep
        logits = self.model(ids, self.pos)
        self.pos = torch.tensor([ids.shape[1]], device="cuda")  # want: CG201~
        return logits.argmax(-1)[:, -1:]

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
        return self.loop(self.prefill(ids), n)

    def resume(self, tok, n):
        return self.loop(tok, n)
