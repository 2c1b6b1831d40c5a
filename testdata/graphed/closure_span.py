"""A closure called inside a capture_begin()..capture_end() span reads a local
derived before the span (CG202 once missed it: it looked for the closure's call
inside the capture_begin statement)."""
import torch


def capture(g, seq_lens, model):
    cu = torch.cumsum(seq_lens, 0).to(torch.int32)  # want: CG202

    def inner():
        return model(cu)

    g.capture_begin()
    y = inner()
    g.capture_end()
    return y
