"""Entry points timing the operators with different backends."""
import functools

import torch
import rowjit

from kernels import RowStep, partial_rows, profiled_graph_rows, profiled_rows, centered_rows, clipped_rows, graphed_rows, mixed_rows, normed_rows, padded_rows, scaled_rows, shifted_rows
from timing import KernelProfiler, Profiler, bench, bench_dispatch, bench_repeated


def time_default(x):  # context: eager
    bench(lambda: scaled_rows(x))


def time_event(x):  # context: eager
    bench(lambda: clipped_rows(x), backend="event")


def time_graph(x):  # context: eager
    bench(lambda: shifted_rows(x), backend="graph")


def time_profiled(x):  # context: eager
    p = Profiler()
    p.measure(lambda: normed_rows(x))
    p.measure(lambda: centered_rows(x), backend="graph")


def time_repeated(x):  # context: eager
    bench_repeated(lambda: padded_rows(x), reps=4)
    bench_repeated(lambda: normed_rows(x))


def time_dispatch(x):  # context: eager
    bench_dispatch(lambda: mixed_rows(x))
    bench_dispatch(lambda: graphed_rows(x), backend="graph")


def time_kernel_profiler(x):  # context: eager
    prof = KernelProfiler()
    prof.do_bench(lambda: profiled_rows(x))
    prof.do_bench(lambda: profiled_graph_rows(x), backend="graph")


def time_objects(x):  # context: eager
    # A callable object and a partial: what the capture runs is what calling them runs.
    bench(RowStep(x), backend="graph")
    bench(functools.partial(partial_rows, x, 2.0), backend="graph")


def time_compiled(x, mode):  # context: eager
    # An outside library's compiled operator, timed with a backend only known at run time:
    # it holds no project function, so this call captures none of the lambdas above.
    op = rowjit.build("rows")
    bench_dispatch(op, backend=mode)
    bench(op, backend=mode)


if __name__ == "__main__":
    x = torch.randn(8, 8, device="cuda")
    time_default(x)
    time_event(x)
    time_graph(x)
    time_profiled(x)
    time_repeated(x)
    time_kernel_profiler(x)
    time_objects(x)
    time_compiled(x, "graph")
