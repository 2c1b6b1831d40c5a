"""A kernel library whose tuner carries a to-do about graph capture. "TODO: CUDA graph
compatible version" says what the tuner is not yet; it claims nothing, so the tuner is no
claimed root, and the library, which never captures its own code, stays in library mode: its
launchers are checked for the callers that capture them."""

import torch


def measure(fn, args, config):  # context: eager
    # TODO: CUDA graph compatible version
    def timed():  # context: eager
        return fn(*(args + [config]))

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    timed()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)
