"""Captures whose failure is not caught keep their errors."""
import torch


def step_sync(x):  # context: captured
    return x / x.sum().item()  # want: CG101


def step_shape(x):  # context: captured
    return x.nonzero()  # want: CG104


def step_both(x):  # context: captured
    return x * x.max().item()  # want: CG101


def raw_capture(x):  # context: eager
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    try:
        with torch.cuda.stream(s):
            g.capture_begin()
            out = step_sync(x)
            g.capture_end()
    except Exception:
        return None
    return g, out


def reraise_capture(x):  # context: eager
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            out = step_shape(x)
    except RuntimeError as err:
        raise RuntimeError("capture failed") from err
    return g, out


def caught_capture(x):  # context: eager
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            out = step_both(x)
    except Exception:
        return None
    return g, out


def plain_capture(x):  # context: eager
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step_both(x)
    return g, out


def step_narrow(x):  # context: captured
    return x[x > 0]  # want: CG104


def step_tuple(x):  # context: captured
    return x * x.min().item()  # want: CG101~


def step_conditional(x):  # context: captured
    return torch.tensor([1.0, 2.0], device="cuda") + x.sum()  # want: CG103


def narrow_handler(x):  # context: eager
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            out = step_narrow(x)
    except ValueError:
        return None
    return g, out


def tuple_handler(x):  # context: eager
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            out = step_tuple(x)
    except (ValueError, RuntimeError):
        return None
    return g, out


def conditional_reraise(x, strict):  # context: eager
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            out = step_conditional(x)
    except:  # noqa: E722
        if strict:
            raise
        return None
    return g, out


def step_exit(x):  # context: captured
    return x * x.mean().item()  # want: CG101


def exit_handler(x):  # context: eager
    import sys

    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            out = step_exit(x)
    except Exception:
        sys.exit(1)
    return g, out
