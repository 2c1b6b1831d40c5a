"""Attention backends, chosen by name at run time."""

import importlib

from .. import runlog


def get_backend(name, cfg, device):
    runlog.here()
    mod = importlib.import_module("minieng.attention.%s_backend" % name)
    return getattr(mod, "Backend")(cfg, device)
