import importlib

from zoo.table import NET_MAP


def class_from_qualname(qualname):  # context: eager
    last_dot = qualname.rfind(".")
    module = importlib.import_module(qualname[:last_dot])
    return getattr(module, qualname[last_dot + 1 :])


def build(arch):  # context: eager
    cls = class_from_qualname(NET_MAP[arch])
    return cls()
