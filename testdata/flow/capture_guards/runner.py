import torch

from comm import AllReduce, maybe_skip, note_capture, sample_stats, top_tokens
from refusals import after_unimplemented, caught, mask_update, grow, refresh_nested, refresh_stats, refresh_with_assert, strict_then_read, table_then_read

_GRAPH_CAPTURING = False


def graph_capturing():  # context: captured
    return _GRAPH_CAPTURING


def decode_step(x, comm):  # context: captured
    x = comm.all_reduce(x)
    x = comm.gather(x)
    top_tokens(x)
    note_capture(x)
    maybe_skip(x, x.shape[0] > 1)
    local_flag(x)
    grow(x, 8)
    table_then_read(x)
    strict_then_read(x, True)
    caught(x)
    if not graph_capturing():
        # Eager only: the global capture flag is set around the capture.
        return x.tolist()
    if not _GRAPH_CAPTURING:
        return x.tolist()
    return x


class GraphRunner:
    def __init__(self, comm):
        self.comm = comm
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):
        global _GRAPH_CAPTURING
        _GRAPH_CAPTURING = True
        with self.comm.capture():
            with torch.cuda.graph(self.graph):
                self.out = decode_step(x, self.comm)
        # Each refusing call last in its own region: it raises under capture,
        # so nothing after it in its block runs under capture (refusals.py).
        with torch.cuda.graph(self.graph):
            sample_stats(x)
        with torch.cuda.graph(self.graph):
            refresh_stats(x)
        with torch.cuda.graph(self.graph):
            refresh_with_assert(x)
        with torch.cuda.graph(self.graph):
            refresh_nested(x)
        with torch.cuda.graph(self.graph):
            mask_update(x)
        with torch.cuda.graph(self.graph):
            after_unimplemented(x)
        _GRAPH_CAPTURING = False


def local_flag(x):  # context: captured
    # A local that happens to share the global flag's name is no flag.
    _GRAPH_CAPTURING = x.shape[0] > 1
    if not _GRAPH_CAPTURING:
        return x.tolist()  # want: CG101?
    return x
