"""A timing helper that captures the callable it is given only for one backend. Which
callables run under capture depends on what each caller passes: `bench(fn)` and
`bench(fn, backend="event")` never capture, `bench(fn, backend="graph")` does. The helper
is reached through a profiler method that passes its own backend parameter on, as kernel
libraries ship them."""
import torch


def bench(fn, warmup=2, backend="event"):  # context: eager
    for _ in range(warmup):
        fn()
    if backend == "graph":
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        g.replay()
    else:
        start = torch.cuda.Event(enable_timing=True)
        fn()
        start.record()
    torch.cuda.synchronize()


def bench_repeated(fn, reps=None):  # context: eager
    fn()
    if reps:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(reps):
                fn()
        g.replay()


class Profiler:
    def __init__(self, backend="event"):  # context: eager
        self.backend = backend

    def measure(self, func, backend="event"):  # context: eager
        return bench(func, backend=backend)


def _time_graph(fn, reps):  # context: eager
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    g.replay()


def _time_events(fn, reps):  # context: eager
    for _ in range(reps):
        fn()


def bench_dispatch(fn, reps=3, backend="event"):  # context: eager
    fn()
    if backend == "event":
        return _time_events(fn, reps)
    elif backend == "graph":
        return _time_graph(fn, reps)
    else:
        raise ValueError(backend)


class KernelProfiler:
    """A profiler object over a compiled kernel: its method passes the callable and its backend
    on through two more helpers, four calls above the capture."""

    def __init__(self, func=None):  # context: eager
        self.func = func

    def do_bench(self, func=None, reps=3, backend="event"):  # context: eager
        if func is None:
            func = self.func
        return bench_layers(func, reps=reps, backend=backend)


def bench_layers(fn, reps=3, backend="event"):  # context: eager
    return bench_dispatch(fn, reps=reps, backend=backend)
