"""Does a membership test with a CUDA tensor read it on the host (a sync a capture forbids)?

The GPU probe cg204_pytree_flatten_neg (2026-12-07-h) faulted eagerly: `x in outs` of a list tries
`==` on each element before an identical one. capguard's value model still gives every `in` test
the kind of metadata, so CG101 says nothing of `if tok in stop_ids:` in captured code. Each case
runs in its own capture on a fresh graph; a capture error is caught and reported.
Run: for c in list_of_ints list_identity_first list_identity_later set_of_tensors
tensor_contains; do python3 bench/probes/member_list.py $c; done (one case a process: a failed
capture can leave the process's CUDA state unusable).
"""
import json
import sys

import torch

from capture_case import case

dev = "cuda"


tok = torch.tensor([7], device=dev)  # a sampled token, one element
other = torch.tensor([3], device=dev)
out = torch.zeros(1, device=dev)


def list_of_ints():
    out.add_(1)
    return tok in [2, 7]  # `tok == 2`, then its truth: a read of tok


def list_identity_first():
    out.add_(1)
    return tok in [tok, other]  # identity meets first: no comparison


def list_identity_later():
    out.add_(1)
    return tok in [other, tok]  # `other == tok` first: a read


def set_of_tensors():
    out.add_(1)
    return tok in {other, tok}  # hashes by identity


def tensor_contains():
    out.add_(1)
    return 7 in tok  # Tensor.__contains__: (tok == 7).any(), then its truth


CASES = {"list_of_ints": list_of_ints, "list_identity_first": list_identity_first,
         "list_identity_later": list_identity_later, "set_of_tensors": set_of_tensors,
         "tensor_contains": tensor_contains}
print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name()}), flush=True)
case(sys.argv[1], CASES[sys.argv[1]], show_eager=True)
