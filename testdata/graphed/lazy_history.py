"""Lazy runners that keep the step's output under another name, or store it into a history,
before returning. An alias is the output; an item store into a tensor copies the output's data
(it reads it), one into a dict or a list keeps a reference (it reads nothing)."""
import torch


class AliasedHistoryRunner:
    """Binds the captured output to a local, then writes it into a token history tensor."""

    def __init__(self, head, max_bs, max_len):
        self.head = head
        self.graph = None
        self.static_h = torch.zeros(max_bs, 32, device="cuda")
        self.history = torch.zeros(max_bs, max_len, dtype=torch.long, device="cuda")
        self.pos = 0

    def step(self, h):
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            self.static_h.copy_(h)
            with torch.cuda.graph(self.graph):
                self.picked = self.head(self.static_h).argmax(-1)
        else:
            self.static_h.copy_(h)
            self.graph.replay()
        tok = self.picked
        self.pos += 1
        self.history[:, self.pos] = tok  # want: CG204 "it holds `self.picked`"
        return self.pos


class AliasedReturnRunner:
    """Binds the captured output to a local in one statement and computes with it in the next."""

    def __init__(self, head, max_bs):
        self.head = head
        self.graph = None
        self.static_h = torch.zeros(max_bs, 32, device="cuda")

    def step(self, h):
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            self.static_h.copy_(h)
            with torch.cuda.graph(self.graph):
                self.scores = self.head(self.static_h)
        else:
            self.static_h.copy_(h)
            self.graph.replay()
        scores = self.scores
        return scores.softmax(-1)  # want: CG204


class ViewAliasRunner:
    """Rebinds the output's own name to a view of it: still the output."""

    def __init__(self, head, max_bs):
        self.head = head
        self.graphs = {}
        self.static_h = torch.zeros(max_bs, 32, device="cuda")

    def step(self, h):
        bs = h.shape[0]
        self.static_h[:bs].copy_(h)
        g = self.graphs.get(bs)
        if g is None:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                out = self.head(self.static_h)
            self.graphs[bs] = (g, out)
        else:
            g, out = self.graphs[bs]
            g.replay()
        out = out[:bs]
        return out * 2  # want: CG204


class DictHistoryRunner:
    """Keeps the output in a dict of steps: a reference, no read (negative)."""

    def __init__(self, head, max_bs):
        self.head = head
        self.graph = None
        self.static_h = torch.zeros(max_bs, 32, device="cuda")
        self.kept = {}
        self.pos = 0

    def step(self, h):
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            self.static_h.copy_(h)
            with torch.cuda.graph(self.graph):
                self.picked = self.head(self.static_h).argmax(-1)
        else:
            self.static_h.copy_(h)
            self.graph.replay()
        tok = self.picked
        self.pos += 1
        self.kept[self.pos] = tok
        return self.pos


class ReplayedHistoryRunner:
    """Replays right after capturing, then stores into the history (negative)."""

    def __init__(self, head, max_bs, max_len):
        self.head = head
        self.graph = None
        self.static_h = torch.zeros(max_bs, 32, device="cuda")
        self.history = torch.zeros(max_bs, max_len, dtype=torch.long, device="cuda")
        self.pos = 0

    def step(self, h):
        self.static_h.copy_(h)
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.picked = self.head(self.static_h).argmax(-1)
        self.graph.replay()
        tok = self.picked
        self.pos += 1
        self.history[:, self.pos] = tok
        return self.pos


class HandedHistoryRunner:
    """Stores into a history it is handed, which may be a tensor or a list: a warning that names
    the assumption."""

    def __init__(self, head, max_bs):
        self.head = head
        self.graph = None
        self.static_h = torch.zeros(max_bs, 32, device="cuda")

    def step(self, h, history, pos):
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            self.static_h.copy_(h)
            with torch.cuda.graph(self.graph):
                self.picked = self.head(self.static_h).argmax(-1)
        else:
            self.static_h.copy_(h)
            self.graph.replay()
        tok = self.picked
        history[pos] = tok  # want: CG204~ "assumes `history` is a tensor"
        return pos + 1
