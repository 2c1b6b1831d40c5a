"""Timing helpers whose capture is switched by a closure variable: a parameter of the def
that made the closure, fixed per call of it. A decorator factory's `use_graph` is fixed per
decoration, so only the functions decorated with `use_graph=True` run under capture; a
sweep's nested runner captures only for the sweeps that pass `graph=True`."""
import torch


def repeat(n, fn, args):  # context: captured
    out = None
    for _ in range(n):
        out = fn(*args)
    return out


def profiled(iters=5, use_graph=False):  # context: eager
    def decorator(fn):  # context: eager
        def timed(*args):  # context: eager
            out = repeat(iters, fn, args)
            if use_graph:
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    out = repeat(iters, fn, args)
                g.replay()
            return out

        return timed

    return decorator


def profiled_direct(use_graph=False):  # context: eager
    def decorator(fn):  # context: eager
        def timed(*args):  # context: eager
            if not use_graph:
                return fn(*args)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                out = fn(*args)
            g.replay()
            return out

        return timed

    return decorator


def sweep(step, graph=True):  # context: eager
    def run_once():  # context: eager
        if graph:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                step()
            g.replay()
        else:
            step()

    for _ in range(3):
        run_once()


_graphed = profiled(use_graph=True)


def late(fn):  # context: eager
    return _graphed(fn)
