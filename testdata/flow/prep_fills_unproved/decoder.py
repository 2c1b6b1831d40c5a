"""A pair finding is proved only when both of its sites are: CG201's "captured code binds new memory
to an attribute that replay-prep code fills in place" needs the binding's capture and the fill's
run between replays. A greedy decoder that captures its step again whenever the batch grows, and
fills and rebinds its state only inside its own capture region, has no fill before a replay: the
statements of a function's own capture region are captured code, whatever other context the
function runs in (here replay prep: an engine calls the decoder before its own `.replay()`). A fill whose
function runs before a replay only through a subclass override (a hierarchy edge) is a guess: the
finding on the binding it pairs with is a warning that names it."""
import torch


def step(inp, state):  # context: captured
    return inp * state[:, None]


class Decoder:
    def __call__(self, x):  # context: replay-prep resolution: annotated
        return x


class GreedyDecoder(Decoder):
    def __init__(self, max_bs, dim):
        self.bs = 0
        self.graph = None
        self.state = None
        self.inp = torch.zeros(max_bs, dim, device="cuda")
        self.out_cpu = torch.zeros(max_bs, dim, pin_memory=True)

    def __call__(self, x):  # context: replay-prep resolution: hierarchy
        if self.graph is None or x.shape[0] > self.bs:
            self._capture(x.shape[0])
        self.inp[: x.shape[0]].copy_(x)
        self.graph.replay()
        return self.out_cpu

    def _capture(self, bs):  # context: replay-prep resolution: hierarchy
        self.bs = bs
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.state = torch.full([bs], 2.0, device="cuda")
            out = step(self.inp[:bs], self.state)
            self.state.fill_(1.0)
            self.out_cpu[:bs].copy_(out, non_blocking=True)


class Engine:
    """Decodes with the greedy decoder's graph, then replays a graph of its own on the result."""

    def __init__(self, decoder: Decoder, dim):
        self.decoder = decoder
        self.buf = torch.zeros(8, dim, device="cuda")
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.buf.mul_(2)

    def step(self, x):  # context: eager
        y = self.decoder(x)
        self.buf[: y.shape[0]].copy_(y)
        self.graph.replay()
        return self.buf


class Meta:
    def __init__(self, n):
        self.lens = torch.ones(n, dtype=torch.int64, device="cuda")

    def clamp(self, window):  # context: captured
        self.lens = torch.clamp(self.lens, max=window)  # want: CG201~
        return self


class Planner:
    def plan(self, meta, lens):  # context: replay-prep resolution: annotated
        pass


class PagedPlanner(Planner):
    def plan(self, meta, lens):  # context: replay-prep resolution: hierarchy
        meta.lens.copy_(lens)


class Runner:
    def __init__(self, planner: Planner, n, dim):
        self.planner = planner
        self.meta = Meta(n)
        self.x = torch.zeros(n, dim, device="cuda")
        self.graph = torch.cuda.CUDAGraph()
        self.out = None

    def capture(self, window):  # context: eager
        with torch.cuda.graph(self.graph):
            m = self.meta.clamp(window)
            self.out = self.x * m.lens[:, None].float()

    def run(self, lens):  # context: eager
        self.planner.plan(self.meta, lens)
        self.graph.replay()
        return self.out
