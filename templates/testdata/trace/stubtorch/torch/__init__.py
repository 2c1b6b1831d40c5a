"""A stand-in for torch with only what capguard's tracer touches: the graph
API of torch.cuda, no tensors, no dispatcher. For the tracer's tests on
interpreters without torch."""

__version__ = "0.0-stub"


class Tensor(object):
    pass


class device(object):
    def __init__(self, type):
        self.type = type


from . import cuda  # noqa: E402,F401
from .utils import _python_dispatch  # noqa: E402,F401
