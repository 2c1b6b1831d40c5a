"""A raise under a compound capture guard: the tensor's device-type flag and a check that the
capture API exists are true wherever a capture runs, and so is `torch.cuda.is_available()`: what
follows the raise never runs under capture. A guard that also needs a caller's setting stays open."""
import torch


def lens_from_cumsum(query, cu_q, cu_kv):
    if query.is_cuda and hasattr(torch.cuda, "is_current_stream_capturing") and torch.cuda.is_current_stream_capturing():
        raise ValueError("pass the host lengths when capturing")
    q_lens = cu_q[1:] - cu_q[:-1]
    return int(q_lens.max().item())


def lens_with_setting(query, cu_q, strict):
    if query.is_cuda and strict and torch.cuda.is_current_stream_capturing():
        raise ValueError("strict mode cannot capture")
    q_lens = cu_q[1:] - cu_q[:-1]
    return int(q_lens.max().item())  # want: CG101


def offsets_list(offsets):
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        raise ValueError("varying shapes need host copies: not graph-safe")
    return offsets.tolist()


def decode(query, cu_q, cu_kv, strict, out):
    # The refusing calls come last: each one raises under capture, so
    # nothing after it in this block runs under capture (refusals.py).
    lens_with_setting(query, cu_q, strict)
    lens_from_cumsum(query, cu_q, cu_kv)
    offsets_list(cu_q)
    return out


def capture(g, query, cu_q, cu_kv, strict, out):
    decode(query, cu_q, cu_kv, strict, out)
    with torch.cuda.graph(g):
        decode(query, cu_q, cu_kv, strict, out)
