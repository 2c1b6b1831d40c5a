"""Runners that capture a decode step on first use of a batch size. Capture records the kernels
without running them: what the capturing call reads afterwards was computed only where a replay (or
an eager run of the step) came first."""
import torch


def sample_into(logits, out):
    out.copy_(logits.argmax(-1))


class LazyGreedyRunner:
    """Captures on the first call, replays on the others, and reads the output either way."""

    def __init__(self, model, max_bs):
        self.model = model
        self.graphs = {}
        self.static_x = torch.zeros(max_bs, 64, device="cuda")
        self.out = None

    def run(self, x):
        bs = x.shape[0]
        self.static_x[:bs].copy_(x)
        g = self.graphs.get(bs)
        if g is None:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.out = self.model(self.static_x[:bs])
            self.graphs[bs] = g
        else:
            g.replay()
        return self.out.argmax(-1)  # want: CG204 "no replay in between"


class LazyTokenRunner:
    """Writes into a persistent token buffer through a helper, then gathers the tokens."""

    def __init__(self, model, max_bs, steps):
        self.model = model
        self.graphs = {}
        self.static_x = torch.zeros(max_bs, 64, device="cuda")
        self.tokens = [torch.zeros(max_bs, dtype=torch.long, device="cuda") for _ in range(steps)]

    def propose(self, x, steps):
        bs = x.shape[0]
        self.static_x[:bs].copy_(x)
        bufs = [self.tokens[i][:bs] for i in range(steps)]
        g = self.graphs.get(bs)
        if g is None:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for i in range(steps):
                    sample_into(self.model(self.static_x[:bs]), bufs[i])
            self.graphs[bs] = g
        else:
            g.replay()
        picked = []
        for i in range(steps):
            picked.append(bufs[i][:bs])
        return torch.stack(picked, dim=-1)  # want: CG204


class ReplayingRunner:
    """Replays right after capturing: the capturing call computes too (negative)."""

    def __init__(self, model, max_bs):
        self.model = model
        self.graphs = {}
        self.static_x = torch.zeros(max_bs, 64, device="cuda")
        self.out = None

    def run(self, x):
        bs = x.shape[0]
        self.static_x[:bs].copy_(x)
        if bs not in self.graphs:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.out = self.model(self.static_x[:bs])
            self.graphs[bs] = g
        self.graphs[bs].replay()
        return self.out.argmax(-1)


class EagerFirstRunner:
    """Runs the step eagerly into the buffer before capturing it (negative)."""

    def __init__(self, model, max_bs):
        self.model = model
        self.graphs = {}
        self.static_x = torch.zeros(max_bs, 64, device="cuda")
        self.tokens = torch.zeros(max_bs, dtype=torch.long, device="cuda")

    def run(self, x):
        bs = x.shape[0]
        self.static_x[:bs].copy_(x)
        g = self.graphs.get(bs)
        if g is None:
            sample_into(self.model(self.static_x[:bs]), self.tokens[:bs])
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                sample_into(self.model(self.static_x[:bs]), self.tokens[:bs])
            self.graphs[bs] = g
        else:
            g.replay()
        return self.tokens[:bs].clone()


class CapturingBuilder:
    """Captures for later replay and hands the output back beside its graph, or to a caller that
    stores it (negatives)."""

    def __init__(self, model, max_bs):
        self.model = model
        self.static_x = torch.zeros(max_bs, 64, device="cuda")
        self.graphs = {}
        self.outputs = {}

    def capture_one(self, bs):
        for _ in range(2):
            self.model(self.static_x[:bs])
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = self.model(self.static_x[:bs])
        return g, out

    def capture_out(self, bs):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = self.model(self.static_x[:bs])
        self.graphs[bs] = g
        return out

    def capture_all(self, sizes):
        for bs in sizes:
            g, out = self.capture_one(bs)
            self.graphs[bs] = g
            self.outputs[bs] = out
            self.outputs[bs] = self.capture_out(bs)
            self.capture_out(bs)


def capture_fwd_bwd(fwd, bwd, dy):
    """Captures a forward, then a backward that consumes its outputs, into a second graph, and
    replays both: sizing a buffer like the outputs, and capturing their consumer, read no data
    (negatives)."""
    fwd_g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(fwd_g):
        out = fwd()
    dy_static = torch.zeros_like(out[0])
    bwd_g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(bwd_g):
        grads = bwd(dy_static, out)
    dy_static.copy_(dy)
    fwd_g.replay()
    bwd_g.replay()
    return [g.clone() for g in grads]


def capture_and_check(fwd, ref):
    """Compares the captured output with a reference before any replay (positive)."""
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fwd()
    torch.testing.assert_close(out, ref)  # want: CG204
    return g


def capture_time_and_check(fwd, ref, timer):
    """Times the graph's replays with a callable handed to a timer (which calls it: a replay),
    then compares the output (negative)."""
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fwd()
    ms = timer(lambda g=g: g.replay(), warmup=5, rep=20)
    torch.testing.assert_close(out, ref)
    return ms


def capture_bench_and_check(fwd, ref, timer):
    """The same with a nested def that replays (negative)."""
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fwd()

    def run_graph():
        g.replay()

    ms = timer(run_graph)
    torch.testing.assert_close(out, ref)
    return ms


class FlatteningRunner:
    """Takes the captured output apart with torch's pytree to keep its leaves, asks whether the
    input is among them by identity (`is`, a set's hash), and reads them only after a replay
    (negative): flattening walks the structure, reading no tensor's data."""

    def __init__(self, model, max_bs):
        self.model = model
        self.graph = None
        self.static_x = torch.zeros(max_bs, 64, device="cuda")
        self.leaves = None

    def run(self, x):
        self.static_x.copy_(x)
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                outs = self.model(self.static_x)
            self.leaves, self.spec = torch.utils._pytree.tree_flatten(outs)
            leaves = torch.utils._pytree.tree_leaves(outs)
            self.aliased = self.static_x in set(leaves) or any(t is self.static_x for t in leaves)
        self.graph.replay()
        return torch.utils._pytree.tree_unflatten([t.clone() for t in self.leaves], self.spec)


class MemberRunner:
    """Asks whether the input is among the captured outputs with `in` on their list before any
    replay: a list's membership test compares each element before an identical one with `==`,
    which reads the output's data (a one-element one's value; a larger one's truth raises)."""

    def __init__(self, model, max_bs):
        self.model = model
        self.graph = None
        self.static_x = torch.zeros(max_bs, 64, device="cuda")

    def run(self, x):
        self.static_x.copy_(x)
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                outs = self.model(self.static_x)
            leaves = torch.utils._pytree.tree_leaves(outs)
            self.aliased = self.static_x in leaves  # want: CG204~ "compares the output by value"
        self.graph.replay()
        return outs


class StackingRunner:
    """Stacks the captured outputs on the capturing call before any replay: torch.stack reads
    their data, which no kernel has written yet."""

    def __init__(self, model, max_bs):
        self.model = model
        self.graph = None
        self.static_x = torch.zeros(max_bs, 64, device="cuda")

    def run(self, x):
        self.static_x.copy_(x)
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                outs = self.model(self.static_x)
            return torch.stack(torch.utils._pytree.tree_leaves(outs))  # want: CG204
        self.graph.replay()
        return None
