"""One decorator wraps many functions: a call through one decorated name runs that function
(and the wrapper), not every function the decorator wraps. The decode graph captures
paged_decode only; prefill_varlen and the debug dump share its wrappers (a plain one and one
a factory makes) and are never captured, so their host reads are not reported."""
import functools

import torch


def joint_tensors(fn):  # context: eager
    @functools.wraps(fn)
    def wrapper(q, k, v, **kwargs):  # context: captured
        joint = kwargs.pop("joint_kv", None)
        if joint is not None:
            k = torch.cat([k, joint[0]], dim=1)
            v = torch.cat([v, joint[1]], dim=1)
        return fn(q, k, v, **kwargs)

    return wrapper


def timed(label):  # context: eager
    def decorator(fn):  # context: eager
        @functools.wraps(fn)
        def inner(*args, **kwargs):  # context: captured
            torch.cuda.nvtx.range_push(label)
            out = fn(*args, **kwargs)
            torch.cuda.nvtx.range_pop()
            return out

        chosen = inner if torch.cuda.is_available() else fn
        return chosen

    return decorator


BACKENDS = {}


def register(fn):  # context: eager
    BACKENDS[fn.__name__] = fn
    return fn


@register
@timed("decode")
@joint_tensors
def paged_decode(q, k, v, seq_lens):  # context: captured
    if seq_lens.max().item() > k.shape[1]:  # want: CG101
        raise ValueError("sequence longer than the cache")
    return torch.softmax(q @ k.transpose(1, 2), -1) @ v


@register
@timed("prefill")
@joint_tensors
def prefill_varlen(q, k, v, cu_seqlens=None):  # context: eager
    longest = int((cu_seqlens[1:] - cu_seqlens[:-1]).max().item())
    return torch.softmax(q[:, :longest] @ k.transpose(1, 2), -1) @ v


@register
@joint_tensors
def dump_scores(q, k, v):  # context: eager
    print("max score", (q @ k.transpose(1, 2)).max().item())
    return v


class DecodeGraph:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q, k, v, seq_lens):
        with torch.cuda.graph(self.graph):
            self.out = paged_decode(q, k, v, seq_lens=seq_lens)


def serve(q, k, v, cu):  # context: eager
    prefill_varlen(q, k, v, cu_seqlens=cu)
    dump_scores(q, k, v)
    runner = DecodeGraph()
    runner.capture(q, k, v, torch.full((q.shape[0],), k.shape[1], device=q.device))
    return runner
