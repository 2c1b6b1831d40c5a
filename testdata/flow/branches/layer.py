"""A chain is proved only through branches the analysis evaluates. A layer whose forward runs
its context-parallel or FP8 path only when a setting made at construction says so, and an
exception handler that runs only on failure: those paths are captured where the setting holds,
so their hazards are warnings that name the condition. The straight path, a branch the capture's
own constants select (use_fused=True), the decode branch of a decode test and a capture guard's
capturing branch and an `if True:` are proved: errors."""
import torch


def cp_exchange(x, group):  # context: captured conditional
    sizes = [int(s) for s in x.new_tensor([x.shape[0]]).tolist()]  # want: CG101? CG103?
    return x, sizes


def fp8_scale(x):  # context: captured conditional
    amax = x.abs().max().item()  # want: CG101?
    return x / max(amax, 1e-6)


def fused_norm(x):  # context: captured
    if x.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan")
    return x


def plain_norm(x):  # context: eager
    # The branch the capture's constants switch off (use_fused=True): not captured at all.
    return x / x.norm().item()


def recover(x):  # context: captured conditional
    return x.nonzero()  # want: CG104?


def debug_check(x):  # context: captured
    return x.sum().item()  # want: CG101


def decode_attend(x):  # context: captured
    return x[: int(x.sum().item())]  # want: CG101 CG102


class Layer(torch.nn.Module):
    def __init__(self, cp_group=None, fp8=False):  # context: eager
        super().__init__()
        self.cp_group = cp_group
        self.context_parallel = cp_group is not None
        self.fp8 = fp8

    def forward(self, x, meta, use_fused=False):  # context: captured
        if self.context_parallel:
            x, _ = cp_exchange(x, self.cp_group)
        if self.fp8:
            x = fp8_scale(x)
        x = fused_norm(x) if use_fused else plain_norm(x)
        try:
            x = x * 2
        except RuntimeError:
            x = recover(x)
        if meta.is_decoding:
            x = decode_attend(x)
        if torch.cuda.is_current_stream_capturing():
            x = x + 1
        if True:  # a literal: always taken, no condition
            debug_check(x)
        return x


def capture(layer, x, meta):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = layer(x, meta, use_fused=True)
    return g, y


class DecodeMeta:
    is_decoding = True


capture(Layer(), torch.zeros(4, device="cuda"), DecodeMeta())
