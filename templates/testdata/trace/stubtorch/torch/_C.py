"""The stand-in torch's dispatcher state: per thread, the dispatch-mode and
function-mode stacks and the included dispatch keys, as PyTorch keeps them
(c10's TorchDispatchModeTLS turns the Python keys on when the first mode is
pushed and off when the last is popped; torch.inference_mode saves the whole
key set on entry and puts it back on exit)."""

import threading

_tls = threading.local()


class DispatchKey(object):
    Python = "Python"
    PythonTLSSnapshot = "PythonTLSSnapshot"


def _state():
    st = getattr(_tls, "st", None)
    if st is None:
        st = _tls.st = {"dispatch": [], "function": [], "keys": set()}
    return st


def _len_torch_dispatch_stack():
    return len(_state()["dispatch"])


def _get_dispatch_stack_at(i):
    return _state()["dispatch"][i]


def _push_on_torch_dispatch_stack(mode):
    st = _state()
    if not st["dispatch"]:
        st["keys"].update((DispatchKey.Python, DispatchKey.PythonTLSSnapshot))
    st["dispatch"].append(mode)


def _pop_torch_dispatch_stack(key=None):
    st = _state()
    if not st["dispatch"]:
        raise RuntimeError("trying to pop from empty mode stack")
    m = st["dispatch"].pop()
    if not st["dispatch"]:
        st["keys"].difference_update((DispatchKey.Python, DispatchKey.PythonTLSSnapshot))
    return m


def _len_torch_function_stack():
    return len(_state()["function"])


def _get_function_stack_at(i):
    return _state()["function"][i]


def _push_on_torch_function_stack(mode):
    _state()["function"].append(mode)


def _pop_torch_function_stack():
    st = _state()
    if not st["function"]:
        raise RuntimeError("trying to pop from empty mode stack")
    return st["function"].pop()


def _dispatch_tls_is_dispatch_key_included(k):
    return k in _state()["keys"]


def _dispatch_tls_set_dispatch_key_included(k, on):
    if on:
        _state()["keys"].add(k)
    else:
        _state()["keys"].discard(k)


def _keys_snapshot():
    return set(_state()["keys"])


def _keys_restore(keys):
    _state()["keys"] = set(keys)
