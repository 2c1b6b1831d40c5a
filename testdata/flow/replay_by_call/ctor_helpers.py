"""A layer makes its workspace on first use, then calls the method that replays. Making the
workspace runs its constructor, and the constructor hands part of its work to a private method it
calls on `self` and to closures it defines and runs through a guarded-phase helper: all of that
binds the attributes of the object being made, which no graph has read yet. A later step that
makes a new workspace makes a new object; the graph keeps the old one's tensors, and that is the
step's business, not the constructor's.

What stays: a public method anyone may call on a live workspace, a private method that a later
step also calls (on `self` or on another name: `respare(ws)` calls it on a live one), and a closure the constructor keeps as a callback (it runs after the capture)."""
import torch


def run_phase(name, fn):  # context: replay-prep
    try:
        return fn()
    except RuntimeError as exc:
        raise RuntimeError(name) from exc


def keep(name, fn, registry):  # context: replay-prep
    registry[name] = fn


class Workspace:
    def __init__(self, n):  # context: replay-prep
        self.n = n
        self.callbacks = {}
        self._alloc()

        def _scratch():
            self.scratch = torch.zeros(n, device="cuda")
            self._alloc_index()

        def _phase(name, fn):
            return run_phase(name, fn)

        _phase("scratch", _scratch)

        def _refill():
            self.table = torch.ones(n, device="cuda")  # want: CG201~

        keep("refill", _refill, self.callbacks)
        self.table = torch.zeros(n, device="cuda")
        self._alloc_spare()

    def _alloc(self):  # context: replay-prep
        self.buf = torch.zeros(self.n, device="cuda")
        self.register_buffer("bias", torch.zeros(self.n, device="cuda"))

    def _alloc_index(self):  # context: replay-prep
        self.index = torch.arange(self.n, device="cuda")

    def _alloc_spare(self):  # context: replay-prep
        self.spare = torch.zeros(self.n, device="cuda")  # want: CG201~

    def _grow(self, n):  # context: replay-prep
        self.rows = torch.zeros(n, device="cuda")  # want: CG201~

    def reset(self):  # context: replay-prep
        self.flags = torch.zeros(self.n, device="cuda")  # want: CG201~

    def register_buffer(self, name, t):  # context: replay-prep
        setattr(self, name, t)

    def body(self, x):  # context: captured
        return x * self.buf + self.bias + self.scratch + self.index + self.table + self.rows + self.flags + self.spare


class Layer:
    def __init__(self, n):  # context: replay-prep
        self.n = n
        self.ws = None
        self.graph = None
        self.x = torch.zeros(n, device="cuda")
        self.out = None

    def run_graph(self):  # context: eager
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out = self.ws.body(self.x)
        self.graph.replay()
        return self.out

    def step(self):  # context: eager
        if self.ws is None:
            self.ws = Workspace(self.n)
        self.ws._grow(self.n)
        self.ws.reset()
        self.ws.callbacks["refill"]()
        return self.run_graph()


def respare(ws):  # context: eager
    ws._alloc_spare()


def serve(steps):  # context: eager
    layer = Layer(8)
    for _ in range(steps):
        layer.step()
        respare(layer.ws)
