"""A stand-in for triton with only what capguard's tracer touches: a
JITFunction whose run calls the Python function (for the tracer's tests)."""

__version__ = "0.0-stub"

from .runtime.jit import JITFunction, jit  # noqa: E402,F401
