"""Model registry: architectures are named in the config and imported on
first use, as serving engines do (no static import of any model)."""

import importlib

from . import runlog

_ARCHS = {"tiny-llama": ("minieng.models.llama", "TinyLlamaForCausalLM")}
_MODELS = {}


def register_model(name):
    def deco(cls):
        _MODELS[name] = cls
        return cls

    return deco


def resolve_model(name):
    runlog.here()
    if name not in _MODELS:
        module, cls = _ARCHS[name]
        importlib.import_module(module)
        assert _MODELS.get(name) is not None, cls
    return _MODELS[name]
