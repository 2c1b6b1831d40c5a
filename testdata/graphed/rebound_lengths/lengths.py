"""Sequence-length records built from the static length buffer. Which record class a run uses is
chosen when the module is imported."""
import os

import torch

SPLIT_KV = os.environ.get("SPLIT_KV", "0") == "1"

if SPLIT_KV:

    class Lengths:
        """Keeps the lengths and their prefix sums, computed into a buffer of its own."""

        def __init__(self, lens):
            self.lens = lens
            cu = torch.zeros(lens.shape[0] + 1, dtype=torch.int32, device=lens.device)
            torch.cumsum(self.lens, 0, out=cu[1:])
            self.cu = cu

else:

    class Lengths:
        """Keeps the lengths themselves: a view of the caller's buffer."""

        def __init__(self, lens):
            self.lens = lens
            self.cu = None


class PrefixLengths:
    """Always computes the prefix sums from the lengths, into its own buffer."""

    def __init__(self, lens):
        self.lens = lens
        cu = torch.zeros(lens.shape[0] + 1, dtype=torch.int32, device=lens.device)
        torch.cumsum(self.lens, 0, out=cu[1:])
        self.cu = cu


class HeldLengths:
    """Keeps the lengths themselves and computes nothing from them."""

    def __init__(self, lens):
        self.lens = lens
        self.cu = lens
