"""A runner that takes the graph path or the eager path by one flag, set only by its constructor:
the eager arm of `if self.use_graph:` never runs before the replay under `if self.use_graph:`,
so the batch object it builds there is no state the graph reads. A graph kept in a cache and
captured on a miss still replays on the later calls, so the code before that call prepares
those replays."""
import torch


class StepInput:
    def __init__(self, n):  # context: eager
        self.ids = torch.zeros(n, dtype=torch.long, device="cuda")

    def fill(self, n):  # context: replay-prep
        self.ids.zero_()


class FlagRunner:
    def __init__(self, use_graph):  # context: eager
        self.use_graph = use_graph
        self.inp = StepInput(8)
        self.graph = torch.cuda.CUDAGraph()
        self.out = None

    def body(self):  # context: captured
        return self.inp.ids + 1

    def capture(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.body()

    def launch(self):  # context: eager
        self.graph.replay()
        return self.out

    def run(self, n):  # context: eager
        if self.use_graph:
            self.inp.fill(n)
        else:
            self.inp = StepInput(n)
        if self.use_graph:
            return self.launch()
        return self.body()


class Cached:
    def __init__(self, width):  # context: eager
        self.table = torch.zeros(width, device="cuda")
        self.graphs = {}
        self.outs = {}

    def body(self):  # context: captured
        return self.table * 3

    def forward(self, key):  # context: eager
        if key not in self.graphs:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.outs[key] = self.body()
            self.graphs[key] = g
        self.graphs[key].replay()
        return self.outs[key]

    def set_table(self, t: torch.Tensor):  # context: replay-prep
        self.table = t * 2  # want: CG201~

    def step(self, key, t: torch.Tensor):  # context: eager
        self.set_table(t)
        return self.forward(key)
