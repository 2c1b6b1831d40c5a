import inspect


class JITFunction(object):
    """Parameters in capitals are constexprs (as tl.constexpr would make them)."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.arg_names = list(inspect.signature(fn).parameters)
        self.constexprs = [i for i, n in enumerate(self.arg_names) if n.isupper()]

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def run(self, *args, grid, warmup, **kwargs):
        return self.fn(*args, **kwargs)


def jit(fn):
    return JITFunction(fn)
