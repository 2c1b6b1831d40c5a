"""Weight classes whose constructor is a factory: `RowLinear(...)` runs `LinearBase.__new__`, which
returns an instance of the implementation `_impl_class` picks, so `RowLinear(...)` is never a
`RowLinear`. The dense and quantized implementations are captured through `proj.apply`; the
pass-through one, whose `__new__` makes an instance of its own class, keeps its `__init__`."""
import torch


class DenseImpl:
    def __init__(self, weight):
        self.weight = weight

    def apply(self, x):  # context: captured
        return torch.mm(x, self.weight)


class QuantImpl(DenseImpl):
    def apply(self, x):  # context: captured
        return torch.mm(x, self.weight.float())


class LinearBase:
    def __new__(cls, weight, quantized=False):
        impl = cls._impl_class(quantized)
        return impl(weight)

    @classmethod
    def _impl_class(cls, quantized):
        return None

    def apply(self, x):  # context: eager
        raise NotImplementedError


class RowLinear(LinearBase):
    @classmethod
    def _impl_class(cls, quantized):
        if quantized:
            return QuantImpl
        return DenseImpl


class Tracked:
    count = 0

    def __new__(cls, *args):
        obj = super().__new__(cls)
        Tracked.count += 1
        return obj

    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):  # context: captured
        return x * self.scale
