"""A logging decorator whose wrapper is returned through a helper, a shape the decorator
summary does not read: its parameter holds every function it decorates, and so does the
wrapper's call of it. A call of one decorated op reaches that op only: the wrapper forwards
to what its caller named."""
import functools


def _attach(wrapper, original):  # context: eager
    wrapper.original = original
    return wrapper


def logged(fn):  # context: eager
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # context: captured
        print("call", fn.__name__)
        return fn(*args, **kwargs)

    return _attach(wrapper, fn)
