"""Persistent device buffers for tensors that captured kernels read.

A CUDA graph replays the device addresses it recorded at capture. A tensor
made on every call (``x.to(torch.int32)``, ``x.contiguous()``) and passed to a
kernel is only safe while its memory belongs to the graph; prepared outside
the capture, or allocated by hand, it is freed and reused behind the graph's
back. ``persistent_buffer`` replaces such a temporary with a view of storage
that lives as long as the process, filled with ``copy_`` from the source, so
the address a graph recorded stays valid and the copy is captured with the
kernel that reads it::

    seq_lens_i32 = persistent_buffer("reader.seq_lens_i32", seq_lens.reshape(-1), torch.int32)

``capguard fix`` inserts this function into a file that needs it, or imports
it from the module named by ``helper-module`` in ``[tool.capguard]``.

Behaviour:

- One buffer per (site, dtype, device). ``site`` is a stable string naming the
  call site; ``dtype`` defaults to the source's dtype.
- The buffer is allocated on first use, which must happen outside capture:
  run the model once (warm-up) at the largest batch size before capturing.
  A buffer that would have to grow while the current stream is capturing
  raises ``RuntimeError`` naming the site.
- Each call copies ``src`` into the first ``src.numel()`` elements and returns
  them as a contiguous view shaped like ``src``.
- While the stream is capturing, a CUDA source that needs no conversion (it
  already has ``dtype`` and is contiguous) is returned as it is, unless
  ``copy=True``: that is what ``.contiguous()`` and ``.to(dtype)`` return for
  it, and the graph reads it where it is. A copy would read the same address
  at every replay, so it makes nothing safer, and it costs one more kernel
  in the graph. ``copy=True`` (the fix of ``.clone()``) always copies.

Limits:

- Calls that share a site share storage. The returned view is valid until the
  next call with the same site, dtype and device: keep it for the kernel
  launches that follow, never return or store it. Two streams (or threads)
  using one site at once race on the same memory; give them distinct sites.
- Buffers never shrink. When one grows, the old storage is kept too, since a
  graph captured earlier may still read it. All of it is held for the
  lifetime of the process.
- Values are converted as ``copy_`` converts them, which is what ``.to(dtype)``
  does; autograd history is not kept beyond what ``copy_`` records.
"""

import torch


# Captured kernels must read stable addresses: keep per-call temporaries in
# buffers that outlive every graph (see `capguard rule CG301`).
_persistent_buffers = {}
_retired_buffers = []


def persistent_buffer(site, src, dtype=None, copy=False):
    """Copy src into the persistent buffer of site; return a view shaped like src."""
    dtype = src.dtype if dtype is None else dtype
    if not copy and dtype == src.dtype and src.is_cuda and src.is_contiguous() and torch.cuda.is_current_stream_capturing():
        return src  # nothing to convert: the graph reads the source where it is
    key = (site, dtype, src.device)
    n = src.numel()
    buf = _persistent_buffers.get(key)
    if buf is None or buf.numel() < n:
        if src.is_cuda and torch.cuda.is_current_stream_capturing():
            have = 0 if buf is None else buf.numel()
            raise RuntimeError(
                f"persistent_buffer {site!r}: needs {n} elements of {dtype} on "
                f"{src.device} but has {have} while the stream is capturing; "
                "warm up at the largest batch size before capture"
            )
        if buf is not None:
            _retired_buffers.append(buf)  # a graph captured earlier may read it
        buf = torch.empty(n, dtype=dtype, device=src.device)
        _persistent_buffers[key] = buf
    out = buf[:n].view(src.shape)
    out.copy_(src)
    return out
