"""Statements that raise while a stream captures guard what follows them: an
`assert not torch.cuda.is_current_stream_capturing()`, and a call of a helper
that raises on every path while capturing (its body refuses capture before it
can return). Nothing after such a statement, in its block, runs under capture.
A helper that can return first (a cache hit) or refuses only on a condition
guards nothing."""
import torch

_TABLES = {}


def ensure_eager(what):  # context: captured
    """Refuse to run under capture."""
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError(what + " cannot run under CUDA graph capture")


def must_be_eager():  # context: captured
    assert not torch.cuda.is_current_stream_capturing(), "eager only"


def ensure_eager_twice(what):  # context: captured
    # Its first statement is a call of a helper that refuses: so does it.
    ensure_eager(what)


def cached_table(n):  # context: captured
    # A cache hit returns before the refusal: under capture it can return.
    if n in _TABLES:
        return _TABLES[n]
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("build the table before capture")
    _TABLES[n] = torch.arange(n, device="cuda")
    return _TABLES[n]


def strict_only(strict):  # context: captured
    # Refuses only when `strict` holds.
    if strict and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("strict mode cannot be captured")


def refresh_stats(x):  # context: captured
    ensure_eager("stats")
    return x.max().item()


def refresh_with_assert(x):  # context: captured
    must_be_eager()
    n = x.nonzero().shape[0]
    return n


def refresh_nested(x):  # context: captured
    ensure_eager_twice("nested")
    return x.tolist()


def grow(x, rows):  # context: captured
    if rows > x.shape[0]:
        assert not torch.cuda.is_current_stream_capturing(), "grow during warm-up"
        print("grown to", x.sum().item())
    # The assert guards its own block only.
    return x.max().item()  # want: CG101


def table_then_read(x):  # context: captured
    t = cached_table(4)
    return (x + t).max().item()  # want: CG101


def strict_then_read(x, strict):  # context: captured
    strict_only(strict)
    return x.max().item()  # want: CG101


def caught(x):  # context: captured
    try:
        ensure_eager("caught")
        host = x.tolist()
    except RuntimeError:
        host = None
    # The refusal is caught: this runs under capture.
    return host, x.max().item()  # want: CG101


def capture_after_check(g, x):
    # The check runs eagerly; the capture begins after it.
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("capture_after_check cannot nest a capture")
    with torch.cuda.graph(g):
        x.max().item()  # want: CG101


def capture_after_refusal(g, x):
    ensure_eager("capture_after_refusal")
    with torch.cuda.graph(g):
        x.nonzero()  # want: CG104


def host_max(x):  # context: captured
    return x.max().item()  # want: CG101


def capture_call_after_check(g, x):
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("no nested capture")
    with torch.cuda.graph(g):
        host_max(x)


def reject_capture(op):  # context: captured
    # Returns only when not capturing; raises otherwise.
    if not torch.cuda.is_current_stream_capturing():
        return
    raise RuntimeError(op + " must not be called during capture")


def unimplemented(x):  # context: captured
    raise NotImplementedError


def mask_update(x):  # context: captured
    reject_capture("mask_update")
    return x.tolist()


def after_unimplemented(x):  # context: captured
    # Always raising is an abstract method's shape, not a refusal of capture.
    unimplemented(x)
    return x.tolist()  # want: CG101
