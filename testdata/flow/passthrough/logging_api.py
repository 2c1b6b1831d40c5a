"""A logging decorator factory in the style of kernel libraries' public APIs. Disabled (the
default), it returns each function through a helper that attaches metadata and returns its first
argument; enabled, it returns a wrapper. The helper and the factory's lambda are shared by every
decorated API: were their returns merged over all calls, one call through one decorated name would
reach every API the factory ever decorated."""
import functools
import os

import torch

LOG_LEVEL = int(os.environ.get("KLIB_LOGLEVEL", "0"))
REGISTRY = []


def _attach_meta(wrapped, original, meta=None):  # context: eager
    try:
        if callable(meta):
            inner = wrapped

            @functools.wraps(inner)
            def _dumping(*args, **kwargs):  # context: captured
                meta(*args)
                return inner(*args, **kwargs)

            _dumping.meta = meta
            return _dumping
        if meta is not None:
            REGISTRY.append((original, meta))
            wrapped.meta = meta
    except Exception as exc:
        print("could not attach", exc)
    return wrapped


def public_api(func=None, *, meta=None):  # context: eager
    if LOG_LEVEL == 0:
        if func is None:
            return lambda f: _attach_meta(f, f, meta=meta)
        return _attach_meta(func, func, meta=meta)

    def decorator(f):  # context: eager
        @functools.wraps(f)
        def wrapper(*args, **kwargs):  # context: captured
            print("calling", f.__name__)
            return f(*args, **kwargs)

        return _attach_meta(wrapper, f, meta=meta)

    if func is None:
        return decorator
    return decorator(func)


def keep(x):  # context: eager
    return x


@public_api(meta="decode")
def decode_attention(q, k_cache, seq_lens):  # context: captured
    if seq_lens.max().item() > k_cache.shape[1]:  # want: CG101
        raise ValueError("sequence longer than the cache")
    return torch.softmax(q @ k_cache.transpose(1, 2), -1)


@public_api(meta="prefill")
def prefill_attention(q, k, cu_seqlens):  # context: eager
    longest = int((cu_seqlens[1:] - cu_seqlens[:-1]).max().item())
    return torch.softmax(q[:, :longest] @ k.transpose(1, 2), -1)


@public_api
def top_p_sample(probs, top_p):  # context: eager
    keep_n = int((probs.cumsum(-1) < top_p).sum().item())
    return probs[:, :keep_n].argmax(-1)


def plan_prefill(cu_seqlens):  # context: eager
    return keep(cu_seqlens).max().item()
