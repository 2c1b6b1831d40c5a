"""Does indexing with a 0-d integer CUDA tensor read it on the host (a sync a capture forbids)?

A reference attention backend writes `k_cache[i][cache_seqlens[i]] = k[i]` in a loop over the
batch; a review of a never-seen engine (2026-12-07-c) judged that this aborts a capture before a
later hazard is reached. Each case runs in its own capture on a fresh graph; a capture error is
caught and reported (a sticky error would end the process, so each case is checked for it).
Run: for c in getitem_1d_index_tensor index_select_1elem getitem_0d_int64 setitem_0d_int32
setitem_0d_int64; do python3 bench/probes/zero_dim_index.py $c; done (one case a process: a failed
capture can leave the process's CUDA state unusable).
"""
import json
import sys

import torch

from capture_case import case

dev = "cuda"


B, S, D = 4, 16, 8
k_cache = torch.zeros(B, S, D, device=dev)
k = torch.randn(B, D, device=dev)
seqlens = torch.arange(B, dtype=torch.int32, device=dev)
seqlens64 = torch.arange(B, dtype=torch.int64, device=dev)
idx2 = torch.tensor([1, 2], device=dev)


def setitem_0d():
    for i in range(B):
        k_cache[i][seqlens[i]] = k[i]


def setitem_0d_int64():
    for i in range(B):
        k_cache[i][seqlens64[i]] = k[i]


def getitem_0d():
    return k_cache[0][seqlens64[1]] * 2


def getitem_1d():
    return k_cache[0][idx2] * 2


def index_select_0d():
    return k_cache[0].index_select(0, seqlens64[1:2]) * 2


CASES = {"getitem_1d_index_tensor": getitem_1d, "index_select_1elem": index_select_0d,
         "getitem_0d_int64": getitem_0d, "setitem_0d_int32": setitem_0d, "setitem_0d_int64": setitem_0d_int64}
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
case(sys.argv[1], CASES[sys.argv[1]])
