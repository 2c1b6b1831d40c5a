"""Captured code that binds new memory to an attribute the replay-prep fills in place: a sliding
window clamps the sequence lengths inside the captured forward by rebinding them. After the capture
the attribute holds the graph's own output, so the per-step copy lands there, the replay recomputes
it from the lengths the capture read (which nothing refreshes), and every replay runs on the
capture's lengths. A helper that fills its parameter counts for the attribute its caller passes.
Clamping in place, a view or a conversion that may return the tensor itself,
and an allocation no kernel writes are no finding."""
import torch


class Seqlen:
    def __init__(self, lens, starts):
        self.lens = lens
        self.starts = starts
        self.cached = torch.zeros_like(lens)
        self.scratch = torch.zeros_like(lens)

    def clamp(self, window):  # context: captured
        self.lens = torch.clamp(self.lens, max=window)  # want: CG201
        self.starts = self.starts.contiguous()
        self.scratch = torch.empty_like(self.lens)
        self.cached = torch.maximum(self.cached, self.lens)  # want: CG201
        return self

    def clamp_in_place(self, window):  # context: captured
        self.lens.clamp_(max=window)
        return self


def fill_prefix(dest, src):  # context: replay-prep
    dest[: src.shape[0]].copy_(src)
    dest[src.shape[0]:].fill_(0)


def shift(meta, by: torch.Tensor):  # context: captured
    meta.starts = meta.starts + by  # want: CG201~
    return meta


class Runner:
    def __init__(self, bs, dim):
        self.x = torch.zeros(bs, dim, device="cuda")
        self.seq = Seqlen(torch.ones(bs, dtype=torch.int64, device="cuda"), torch.zeros(bs, dtype=torch.int64, device="cuda"))
        self.graph = torch.cuda.CUDAGraph()
        self.out = None

    def forward(self, window):  # context: captured
        s = self.seq.clamp(window)
        s = s.clamp_in_place(window)
        return self.x * s.lens[:, None].float()

    def capture(self, window, meta):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.forward(window)
            shift(meta, self.out[:, 0].long())

    def run(self, lens, starts):  # context: eager
        self.seq.lens.copy_(lens)
        self.seq.starts.copy_(starts)
        self.seq.scratch.zero_()
        fill_prefix(self.seq.cached, lens)
        self.graph.replay()
        return self.out
