"""A streaming generator: calling it runs none of its body (it returns a generator object), so a
caller that captures the call captures nothing; the body runs as the caller iterates, host code
that drives one step at a time and reads each token back. It is no launcher root. A context
manager written as a generator runs its body up to the yield on entry, inside whatever block the
caller is in, so it stays one; so does the step the generator calls, which a caller may capture."""
import contextlib

import torch

from .ops import _launch


def decode_step(x):  # context: launcher
    return _launch(x, x.abs().amax().item())  # want: CG101~


def stream_tokens(x, steps):  # context: eager
    for _ in range(steps):
        x = decode_step(x)
        tok = int(x.argmax().item())
        yield tok


def stream_scaled(x, steps):  # context: eager
    for _ in range(steps):
        yield _launch(x, x.norm().item())


@contextlib.contextmanager
def scaled_scope(x):  # context: launcher
    yield _launch(x, x.min().item())  # want: CG101~
