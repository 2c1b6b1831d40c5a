"""Replay prep that grows a buffer only when a batch needs more room than it has, and binds
one only on first use (the first binding is no rebinding). The graph reads what the buffer held at capture, so a growth after
capture is a stale read; but a buffer sized for the largest batch before capture never
grows. That rests on an assumption: warnings that name it. A rebinding with no such guard
is proved."""
import torch


class PagedPlan:
    def __init__(self, device):  # context: eager
        self.device = device
        self.kv_lens = torch.zeros(8, dtype=torch.int32, device=device)
        self.indptr = None
        self.graph = torch.cuda.CUDAGraph()

    def plan(self, seq_lens, indptr):  # context: replay-prep
        need = seq_lens.numel()
        if need > self.kv_lens.shape[0]:
            self.kv_lens = torch.empty(need, dtype=torch.int32, device=self.device)  # want: CG201?
        self.kv_lens[:need].copy_(seq_lens)  # want: CG203
        if self.indptr is None:
            self.indptr = torch.empty(indptr.numel(), dtype=torch.int32, device=self.device)
        self.indptr.copy_(indptr)
        self.seq_lens = seq_lens.to(torch.int32)  # want: CG201~

    def run(self, q):  # context: captured
        return q * self.kv_lens.sum() + self.indptr[-1] + self.seq_lens[0]

    def capture(self, q, seq_lens, indptr):  # context: eager
        self.plan(seq_lens, indptr)
        with torch.cuda.graph(self.graph):
            self.out = self.run(q)

    def step(self, seq_lens, indptr):  # context: eager
        self.plan(seq_lens, indptr)
        self.graph.replay()
        return self.out
