"""An op library (nothing in it captures, so its public functions that reach a kernel are launcher
roots): a layer factory that returns early when its caller asks for an empty shell. The loaders
launch a kernel to probe the layer they build. The only call of Int4Layer.from_float passes
`shell_only=True`, so the weight packing after the early return never runs from a launcher (the
factory itself reaches no kernel, so it is no root of its own); Int8Layer's factory is called with
`shell_only=False`, so its packing runs, and its host sync is a finding."""
import torch
import triton
import triton.language as tl


@triton.jit
def _dequant_kernel(q_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(q_ptr + offs, mask=mask) * tl.load(s_ptr), mask=mask)


def _launch(q, s):  # context: launcher
    out = torch.empty_like(s, shape=q.shape)
    _dequant_kernel[(triton.cdiv(q.numel(), 256),)](q, s, out, q.numel(), BLOCK=256)
    return out


def _pack_int4(w):  # context: eager
    if w.min() >= -8:
        return (w + 8).to(torch.uint8)
    return w.clamp(-8, 7).add(8).to(torch.uint8)


def _pack_int8(w):  # context: launcher
    if w.abs().max() > 127:  # want: CG101~
        w = w.clamp(-127, 127)
    return w.to(torch.int8)


class Int4Layer(torch.nn.Module):
    def __init__(self, rows, cols):  # context: eager
        super().__init__()
        self.q = torch.zeros(rows, cols, dtype=torch.uint8)
        self.s = torch.ones(1)

    @staticmethod
    def from_float(linear, group, shell_only=False):  # context: launcher
        layer = Int4Layer(linear.out_features, linear.in_features)
        if shell_only:
            return layer
        layer.q.copy_(_pack_int4(linear.weight))
        return layer

    def forward(self, x):  # context: launcher
        return x @ _launch(self.q, self.s).t()


class Int8Layer(torch.nn.Module):
    def __init__(self, rows, cols):  # context: eager
        super().__init__()
        self.q = torch.zeros(rows, cols, dtype=torch.int8)
        self.s = torch.ones(1)

    @staticmethod
    def from_float(linear, shell_only=False):  # context: launcher
        layer = Int8Layer(linear.out_features, linear.in_features)
        if shell_only:
            return layer
        layer.q.copy_(_pack_int8(linear.weight))
        return layer

    def forward(self, x):  # context: launcher
        return x @ _launch(self.q, self.s).t()


def load_int4(linear, state):  # context: launcher
    layer = Int4Layer.from_float(linear, group=128, shell_only=True)
    layer.load_state_dict(state)
    layer.probe = _launch(layer.q, layer.s)
    return layer


def load_int8(linear):  # context: launcher
    layer = Int8Layer.from_float(linear, shell_only=False)
    layer.probe = _launch(layer.q, layer.s)
    return layer
