"""A test's spawned worker runs once in its process: what it does before the loop that replays
runs before the first replay."""
import multiprocessing

import torch

from .once import LazyRunner, Weights


def run_worker(n):  # context: eager
    weights = Weights(n)
    weights.w = weights.w.half().float()
    engine = LazyRunner(weights)
    for _ in range(3):
        engine.step()


def test_worker():  # context: eager
    proc = multiprocessing.Process(target=run_worker, args=(8,))
    proc.start()
    proc.join()
    assert proc.exitcode == 0
    assert torch.cuda.is_available() or True
