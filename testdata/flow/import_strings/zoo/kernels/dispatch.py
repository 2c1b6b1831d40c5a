import importlib


def default_scale(x):  # context: captured
    # A literal module name, a literal member: resolved.
    return importlib.import_module("zoo.kernels.default").scale(x)


def device_scale(device):  # context: captured
    # A module under a literal prefix: each submodule of zoo.kernels may be the one.
    module = importlib.import_module(f"zoo.kernels.{device}")
    return getattr(module, "scale")
