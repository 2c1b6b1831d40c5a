"""Explicit capture guards beyond a bare `if torch.cuda.is_current_stream_capturing():`:
an early exit under the guard (nothing after it runs under capture), a project helper
that returns the test, and a project's own capture flag set around the capture region.
Code only under "not capturing" is not captured; code under "capturing" is captured
when captured code reaches it."""
import contextlib

import torch


def stream_is_capturing():  # context: captured
    return torch.cuda.is_current_stream_capturing()


def graphs_capturing():  # context: captured
    # The same test through torch.cuda.graphs.
    return torch.cuda.graphs.is_current_stream_capturing()


class AllReduce:
    def __init__(self, group):
        self.group = group
        self._is_capturing = False
        self._ready = False
        self.staging = torch.empty(1 << 20, device="cuda")

    @contextlib.contextmanager
    def capture(self):
        # The capture flag: True around the graph capture, False after.
        try:
            self._is_capturing = True
            yield
        finally:
            self._is_capturing = False

    @contextlib.contextmanager
    def prepared(self):
        # Not a capture flag: its name says nothing of capture, so the
        # code it gates is still captured.
        self._ready = True
        yield
        self._ready = False

    def all_reduce(self, x):  # context: captured
        if self._is_capturing:
            return self._registered(x)
        # Only outside the capture scope.
        return self._staged(x)

    def _registered(self, x):  # context: captured
        # Under the flag: captured when reached.
        return x.sum().item()  # want: CG101~

    def _staged(self, x):  # context: eager
        self.staging[: x.numel()].copy_(x.flatten())
        return self.staging[: x.numel()].sum().item()

    def gather(self, x):  # context: captured
        if not self._ready:
            # `_ready` is no capture flag: this runs under capture.
            return x.sum().item()  # want: CG101?
        return x


def sample_stats(logits):  # context: captured
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("sampling statistics cannot be captured")
    # An early exit above: nothing below runs under capture.
    return logits.max().item()


def top_tokens(logits):  # context: captured
    if not stream_is_capturing():
        n = logits.nonzero().shape[0]
        print("non-zero logits", n)
    if graphs_capturing():
        return logits.argmax(-1)
    return logits.nonzero()


def note_capture(logits):  # context: captured
    if torch.cuda.is_current_stream_capturing():
        logits = logits.float()
    # No exit under the guard: this runs under capture.
    return logits.max().item()  # want: CG101


def maybe_skip(logits, skip):  # context: captured
    if skip and torch.cuda.is_current_stream_capturing():
        return logits
    # The guard holds only when `skip` does: this still runs under capture.
    return logits.nonzero()  # want: CG104
