"""A stand-in for torch with only what capguard's tracer touches: the graph
API of torch.cuda, and small tensors whose ops go through the same two
layers as PyTorch's: the function-mode stack (TorchFunctionMode, what Python
calls) and the dispatcher (TorchDispatchMode, aten ops), with the thread's
dispatch keys kept as c10 keeps them (_C.py). A factory call without a tensor
argument fails as PyTorch's does when the Python dispatch key is set with no
dispatch mode on the stack. For the tracer's tests on interpreters without
torch."""

import builtins
import functools
import itertools

from . import _C

__version__ = "0.0-stub"


class dtype(object):
    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


int32 = dtype("int32", 4)
int64 = dtype("int64", 8)
float32 = dtype("float32", 4)
bool = dtype("bool", 1)
long = int64


class device(object):
    def __init__(self, type):
        self.type = str(type).split(":")[0]

    def __str__(self):
        return self.type


_ADDR = itertools.count(1)


class _Storage(object):
    def __init__(self, n, esize):
        self.data = [0] * n
        self.esize = esize
        self.ptr = next(_ADDR) * 0x10000

    def data_ptr(self):
        return self.ptr

    def nbytes(self):
        return len(self.data) * self.esize

    def resize_(self, nbytes):
        self.data = [0] * (nbytes // self.esize)
        self.ptr = next(_ADDR) * 0x10000


class _Op(object):
    """An aten op as a dispatch mode sees it."""

    def __init__(self, name, impl):
        self.__name__, self.impl = name, impl

    def __str__(self):
        return "aten.%s.default" % self.__name__

    def __call__(self, *args, **kwargs):
        return self.impl(*args, **kwargs)


def _has_tensor(args, kwargs):
    for a in list(args) + list((kwargs or {}).values()):
        if isinstance(a, Tensor) or isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            return True
    return False


def _dispatch(name, impl, args, kwargs=None):
    kwargs = kwargs or {}
    st = _C._state()
    if st["dispatch"]:
        mode = _C._pop_torch_dispatch_stack(None)
        try:  # the modes below the top one see what it calls
            return mode.__torch_dispatch__(_Op(name, lambda *a, **k: _dispatch(name, impl, a, k)), (Tensor,), args, kwargs)
        finally:
            _C._push_on_torch_dispatch_stack(mode)
    if _C.DispatchKey.Python in st["keys"] and not _has_tensor(args, kwargs):
        raise RuntimeError('isIncludedInAlias(...) INTERNAL ASSERT FAILED at "PythonFallbackKernel.cpp":138, please report a bug to PyTorch. '
                           "Hit Python dispatch key but no arguments had PyInterpreter (no tensor args?)")
    return impl(*args, **kwargs)


def _function(name, impl, args, kwargs=None):
    """A call the function-mode stack sees, then the dispatcher."""
    kwargs = kwargs or {}
    st = _C._state()
    if st["function"]:
        mode = _C._pop_torch_function_stack()
        try:  # the modes below the top one see what it calls
            return mode.__torch_function__(_Op(name, lambda *a, **k: _function(name, impl, a, k)), (Tensor,), args, kwargs)
        finally:
            _C._push_on_torch_function_stack(mode)
    return _dispatch(name, impl, args, kwargs)


def _api(name):
    def deco(impl):
        @functools.wraps(impl)
        def f(*args, **kwargs):
            return _function(name, impl, args, kwargs)

        f.__name__ = name
        return f

    return deco


def _capturing():
    from .cuda import graphs

    return builtins.bool(graphs._CAPTURING)


class Tensor(object):
    def __init__(self, storage, offset, shape, stride, dtype_, dev, base=None):
        self._st, self._off, self.shape, self._stride = storage, offset, tuple(shape), tuple(stride)
        self.dtype, self.device, self._base = dtype_, dev, base

    # metadata
    def untyped_storage(self):
        return self._st

    def data_ptr(self):
        return self._st.ptr + self._off * self.element_size()

    def storage_offset(self):
        return self._off

    def stride(self):
        return self._stride

    def element_size(self):
        return self.dtype.itemsize

    def size(self, d=None):
        return self.shape if d is None else self.shape[d]

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def dim(self):
        return len(self.shape)

    def is_pinned(self):
        return False

    def __len__(self):
        return self.shape[0]

    def _flat(self):
        """Storage indices of the elements, row-major."""
        idx = [self._off]
        for n, s in zip(self.shape, self._stride):
            idx = [i + k * s for i in idx for k in range(n)]
        return idx

    def _values(self):
        return [self._st.data[i] for i in self._flat()]

    def _view(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        off, shape, stride = self._off, [], []
        dims = list(zip(self.shape, self._stride))
        for d, i in enumerate(idx):
            n, s = dims[d]
            if isinstance(i, int):
                off += (i % n) * s
            else:
                a, b, step = i.indices(n)
                off += a * s
                shape.append(max(0, (b - a + step - 1) // step))
                stride.append(s * step)
        for n, s in dims[len(idx):]:
            shape.append(n)
            stride.append(s)
        return Tensor(self._st, off, shape, stride, self.dtype, self.device, base=self._base or self)

    # ops (each through the function-mode stack and the dispatcher)
    def __getitem__(self, idx):
        return _function("__getitem__", lambda t, i: t._view(i), (self, idx))

    def __setitem__(self, idx, v):
        def impl(t, i, v):
            t._view(i).copy_(v) if isinstance(v, Tensor) else t._view(i).fill_(v)

        _function("__setitem__", impl, (self, idx, v))

    def copy_(self, src):
        def impl(t, s):
            vals = s._values() if isinstance(s, Tensor) else list(s)
            for i, v in zip(t._flat(), itertools.cycle(vals)):
                t._st.data[i] = v
            return t

        return _function("copy_", impl, (self, src))

    def fill_(self, v):
        def impl(t, v):
            for i in t._flat():
                t._st.data[i] = v
            return t

        return _function("fill_", impl, (self, v))

    def zero_(self):
        return self.fill_(0)

    def resize_(self, *shape):
        def impl(t, *shape):
            n = 1
            for s in shape:
                n *= s
            t._st.resize_(n * t.element_size())
            t.shape, t._stride, t._off = tuple(shape), _contig(shape), 0
            return t

        return _function("resize_", impl, (self,) + tuple(shape))

    def item(self):
        return _function("item", lambda t: t._values()[0], (self,))

    def __int__(self):
        return _function("__int__", lambda t: int(t._values()[0]), (self,))

    def tolist(self):
        return _function("tolist", lambda t: t._values(), (self,))

    def clone(self):
        return _function("clone", lambda t: _new(t.shape, t.dtype, t.device, t._values()), (self,))

    def contiguous(self):
        return self.clone()

    def sum(self):
        return _function("sum", lambda t: _new((), t.dtype, t.device, [sum(t._values())]), (self,))

    def __add__(self, o):
        def impl(a, b):
            bv = b._values() if isinstance(b, Tensor) else [b]
            return _new(a.shape, a.dtype, a.device, [x + y for x, y in zip(a._values(), itertools.cycle(bv))])

        return _function("add", impl, (self, o))

    def __mul__(self, o):
        def impl(a, b):
            bv = b._values() if isinstance(b, Tensor) else [b]
            return _new(a.shape, a.dtype, a.device, [x * y for x, y in zip(a._values(), itertools.cycle(bv))])

        return _function("mul", impl, (self, o))

    def __repr__(self):
        return "tensor(%r)" % self._values()


def _contig(shape):
    st, acc = [], 1
    for n in reversed(list(shape)):
        st.insert(0, acc)
        acc *= n
    return tuple(st)


def _new(shape, dtype_, dev, values=None):
    shape = tuple(shape)
    n = 1
    for s in shape:
        n *= s
    st = _Storage(n, dtype_.itemsize)
    if values is not None:
        st.data[:len(values)] = list(values)[:n]
    return Tensor(st, 0, shape, _contig(shape), dtype_, dev if isinstance(dev, device) else device(dev or "cpu"))


def _shape(size):
    return tuple(size) if isinstance(size, (tuple, list)) else (size,)


def full(size, fill_value, dtype=None, device=None):
    return _function("full", lambda s, v, dtype=None, device=None: _new(_shape(s), dtype or float32, device, [v] * _n(_shape(s))),
                     (size, fill_value), {"dtype": dtype, "device": device})


def _n(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def zeros(*size, dtype=None, device=None):
    size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    return full(size, 0, dtype=dtype, device=device)


def tensor(values, dtype=None, device=None):
    return _function("tensor", lambda v, dtype=None, device=None: _new((len(v),), dtype or int64, device, v), (list(values),),
                     {"dtype": dtype, "device": device})


def cat(ts, dim=0):
    return _function("cat", lambda ts, dim=0: _new((sum(t.shape[0] for t in ts),) + ts[0].shape[1:], ts[0].dtype, ts[0].device,
                                                   [v for t in ts for v in t._values()]), (list(ts),), {"dim": dim})


def bincount(t, minlength=0):
    def impl(t, minlength=0):
        if _capturing() and t.device.type != "cpu":
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
        vals = t._values()
        n = max(max(vals) + 1 if vals else 0, minlength)
        return _new((n,), int64, t.device, [vals.count(i) for i in range(n)])

    return _function("bincount", impl, (t,), {"minlength": minlength})


def compile(fn=None, **kw):
    """A stand-in torch.compile: the first call for each input length
    "compiles" inside a tracing context, reading a constant on the host as a
    compiler does, then every call runs fn."""
    if fn is None:
        return lambda f: compile(f, **kw)
    seen = set()

    @functools.wraps(fn)
    def compiled(*args, **kwargs):
        key = tuple(a.shape for a in args if isinstance(a, Tensor))
        if key not in seen:
            from . import _guards

            with _guards.tracing(object()):
                tensor([len(key)]).item()  # the compiler's own host read
            seen.add(key)
        return fn(*args, **kwargs)

    return compiled


class inference_mode(object):
    """Saves the thread's dispatch key set on entry and restores it on exit (c10::InferenceMode)."""

    def __init__(self, mode=True):
        self.saved = []

    def __enter__(self):
        self.saved.append(_C._keys_snapshot())
        return self

    def __exit__(self, *exc):
        _C._keys_restore(self.saved.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def f(*a, **k):
            with inference_mode():
                return fn(*a, **k)

        return f


from . import cuda  # noqa: E402,F401
from . import _guards, compiler, overrides  # noqa: E402,F401
from .utils import _python_dispatch  # noqa: E402,F401
