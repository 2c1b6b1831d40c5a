import torch


def apply_rotary(x):  # context: captured
    if x.shape[-1] % 2:
        raise ValueError("rotary needs an even head size")
    if x.isinf().any().item():  # want: CG101
        raise FloatingPointError("inf before rotary")
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)
