"""Decoder layers are built by name: the model never names their class."""

from .. import runlog

_LAYER_TYPES = {}


def layer_type(name):
    def deco(cls):
        _LAYER_TYPES[name] = cls
        return cls

    return deco


def make_layer(cfg, layer_id, backend):
    runlog.here()
    return _LAYER_TYPES[cfg.layer_type](cfg, layer_id, backend)
