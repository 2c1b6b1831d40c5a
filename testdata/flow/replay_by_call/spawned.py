"""A process's entry runs once, as a program's main does (once.py): what the function handed to
`Process(target=...)` does before its serving loop (building the engine, converting the weights)
runs before the first replay, not between two. What the loop does before each replay runs between
replays. A test's spawned worker is one too (test_spawned.py, whose worker's own code holds what
would be reported)."""
import multiprocessing

from .once import LazyRunner, Weights


def run_engine(batches):  # context: eager
    weights = Weights(8)
    weights.w = weights.w.half().float()
    engine = LazyRunner(weights)
    for s in batches:
        weights.rescale(s)
        engine.step()


def serve(batches):  # context: eager
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=run_engine, args=(batches,))
    proc.start()
    return proc
