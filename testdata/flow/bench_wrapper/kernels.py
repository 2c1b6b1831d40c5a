"""Operators timed by the benchmark entry points. Each reads a tensor on the host."""


def scaled_rows(x):  # context: eager
    return x * x.abs().max().item()


def shifted_rows(x):  # context: captured
    return x + x.min().item()  # want: CG101


def clipped_rows(x):  # context: eager
    return x.clamp(max=x.mean().item())


def centered_rows(x):  # context: captured
    return x - x.sum().item()  # want: CG101


def normed_rows(x):  # context: eager
    return x / x.norm().item()


def padded_rows(x):  # context: captured
    return x + x.numel() * x.max().item()  # want: CG101


def mixed_rows(x):  # context: eager
    return x + x.std().item()


def graphed_rows(x):  # context: captured
    return x - x.median().item()  # want: CG101


def profiled_rows(x):  # context: eager
    return x * x.median().item()


def profiled_graph_rows(x):  # context: captured
    return x * x.amax().item()  # want: CG101


def stepped_rows(x):  # context: captured
    return x * x.min().item()  # want: CG101


def partial_rows(x, scale):  # context: captured
    return x * scale * x.max().item()  # want: CG101


class RowStep:
    """A callable object holding its input: the helper calls its __call__."""

    def __init__(self, x):  # context: eager
        self.x = x

    def __call__(self):  # context: captured
        return stepped_rows(self.x)
