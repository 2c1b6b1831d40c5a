"""Operands drawn at random before the capture region (tests and benchmarks make their weights and
inputs this way). A draw of a shape, scaled or cast, is built from no input: nothing it could go
stale against, so a kept operand is no finding. One the capturing function drops is the graph's
memory after Python frees it (CG202's constant case), and one computed from an input is derived."""
import torch


class Bench:
    def __init__(self):
        self.graphs = {}
        self.weights = {}

    def capture_matmul(self, x, n, k):
        w = (torch.randn(n, k, device=x.device) / 8).contiguous()
        bias = torch.empty(n, device=x.device).uniform_(-0.1, 0.1).to(torch.bfloat16)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = x @ w.t() + bias
        self.graphs[n] = g
        self.weights[n] = (w, bias)

    def capture_dropped(self, x, n):
        noise = torch.randn(n, device=x.device) * 0.5  # want: CG202 "nothing keeps it alive"
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = x + noise
        self.graphs[n] = g

    def capture_scaled(self, x, n):
        scale = (x.abs().amax() / 8).contiguous()  # want: CG202 "derived from the inputs"
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = x / scale
        self.graphs[n] = g


def check_replays(x, n):
    # A test's replay helper, called while the operand lives: no finding.
    w = torch.randn(n, n, device=x.device) * 0.1
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = x @ w

    def replay():
        g.replay()

    for _ in range(3):
        replay()
    return out.clone()
