"""The independent record of what runs under capture: every engine function
calls here() first; while the current stream captures, here() notes the
caller's file, qualified name and first line. capguard's tracer does not use
it; the GPU test compares the capture map with it."""

import json
import sys

import torch

_SEEN = set()


def here():
    if torch.cuda.is_current_stream_capturing():
        c = sys._getframe(1).f_code
        _SEEN.add((c.co_filename, c.co_qualname, c.co_firstlineno))


def dump(path):
    with open(path, "w") as f:
        json.dump([{"path": p, "qual": q, "first_line": n} for p, q, n in sorted(_SEEN)], f, indent=1)
