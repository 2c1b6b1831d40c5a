"""The stand-in for torch._guards: the tracing context Dynamo sets while it compiles."""

import contextlib
import threading

_tls = threading.local()


class TracingContext(object):
    @staticmethod
    def try_get():
        return getattr(_tls, "ctx", None)


@contextlib.contextmanager
def tracing(ctx):
    old = getattr(_tls, "ctx", None)
    _tls.ctx = ctx
    try:
        yield ctx
    finally:
        _tls.ctx = old
