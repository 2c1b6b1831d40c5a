from .graphs import CUDAGraph, graph, make_graphed_callables  # noqa: F401

SYNCS = []


def synchronize(device=None):
    from . import graphs

    if graphs._CAPTURING:
        raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
    SYNCS.append(device)


def is_initialized():
    return False


def is_available():
    return False


def _lazy_init():
    pass
