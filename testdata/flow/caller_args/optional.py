"""An Optional[torch.Tensor] parameter is a tensor where it is not None: under
`if x is not None:`, after `if x is None: return`, in the else of `if x is
None:`. A read the None test does not guard (`if factor:` on a parameter
that may be None) is not known to read a tensor."""
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
