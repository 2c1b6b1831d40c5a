"""An Optional[torch.Tensor] parameter is a tensor where it is not None: under
`if x is not None:`, after `if x is None: return`, in the else of `if x is
None:`, after `assert x is not None`, and in a subscript `x[0]` (on None it
raises, so wherever it goes on x is the tensor). A read the None test does not
guard (`if factor:` on a parameter that may be None) is not known to read a
tensor."""
from typing import Optional

import torch
from torch import Tensor


def finalize(loss, num_tokens: Optional[torch.Tensor] = None):  # context: captured
    if num_tokens is not None:
        if num_tokens > 0:  # want: CG101?
            loss = loss / num_tokens
    return loss


def trim(x, lengths: Tensor | None = None):  # context: captured
    if lengths is None:
        return x
    return x[: lengths[-1]]  # want: CG101?


def scale(x, factor: Optional[Tensor] = None):  # context: captured
    # `factor` may be None here (the caller leaves it out): no tensor known.
    if factor:
        x = x * 2
    return x


def check_offsets(x, cu: Optional[torch.Tensor] = None):  # context: captured
    assert cu is not None, "varlen needs offsets"
    if cu:  # want: CG101
        x = x * 2
    return x


def first_offset(cu: Optional[torch.Tensor] = None):  # context: captured
    # `cu[0]` raises on None: past it, cu is the tensor.
    assert cu[0] == 0  # want: CG101
    return cu

