"""A tiny stand-in for torch, enough to test persistent_buffer without a GPU.

Tensors are contiguous views of a shared Python list (their storage), so a
test can tell whether two tensors share memory (data_ptr) and whether a copy
landed where a captured kernel would read it.
"""

import itertools


class dtype:
    def __init__(self, name, convert):
        self.name = name
        self.convert = convert

    def __repr__(self):
        return "torch." + self.name


def _wrap(bits):
    def convert(v):
        v = int(v)
        v &= (1 << bits) - 1
        return v - (1 << bits) if v >> (bits - 1) else v
    return convert


int32 = dtype("int32", _wrap(32))
int64 = dtype("int64", _wrap(64))
float32 = dtype("float32", float)
bfloat16 = dtype("bfloat16", float)


class device:
    def __init__(self, spec):
        self.type, _, index = str(spec).partition(":")
        self.index = int(index) if index else 0

    def __eq__(self, other):
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        return f"device(type={self.type!r}, index={self.index})"


_addresses = itertools.count(0x1000, 0x1000)


class _Storage:
    def __init__(self, n):
        self.data = [0] * n
        self.address = next(_addresses)


class Tensor:
    def __init__(self, storage, offset, shape, dtype, device):
        self._storage, self._offset = storage, offset
        self.shape, self.dtype, self.device = tuple(shape), dtype, device

    contiguous = True  # a test may mark a tensor as a non-contiguous view

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def is_contiguous(self):
        return self.contiguous

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def data_ptr(self):
        return self._storage.address + self._offset

    def __getitem__(self, index):
        if len(self.shape) != 1 or not isinstance(index, slice) or index.step not in (None, 1):
            raise NotImplementedError("fake torch slices 1-D tensors only")
        start, stop, _ = index.indices(self.shape[0])
        return Tensor(self._storage, self._offset + start, (max(0, stop - start),), self.dtype, self.device)

    def view(self, shape):
        shape = tuple(shape)
        t = Tensor(self._storage, self._offset, shape, self.dtype, self.device)
        if t.numel() != self.numel():
            raise RuntimeError(f"shape {shape} is invalid for input of size {self.numel()}")
        return t

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], tuple):
            shape = shape[0]
        if shape == (-1,):
            shape = (self.numel(),)
        return self.view(shape)

    def _flat(self):
        return self._storage.data[self._offset:self._offset + self.numel()]

    def copy_(self, src):
        if src.numel() != self.numel():
            raise RuntimeError("copy_: sizes differ")
        values = [self.dtype.convert(v) for v in src._flat()]
        self._storage.data[self._offset:self._offset + len(values)] = values
        return self

    def tolist(self):
        return self._flat()


def empty(n, dtype=float32, device="cpu"):
    return Tensor(_Storage(n), 0, (n,), dtype, device if isinstance(device, globals()["device"]) else globals()["device"](device))


def tensor(values, dtype=int64, device="cpu"):
    t = empty(len(values), dtype=dtype, device=device)
    t._storage.data[:] = [dtype.convert(v) for v in values]
    return t


class _Cuda:
    capturing = False

    def is_current_stream_capturing(self):
        return self.capturing


cuda = _Cuda()
