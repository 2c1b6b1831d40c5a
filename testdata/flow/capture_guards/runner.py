import torch

from comm import AllReduce, maybe_skip, note_capture, sample_stats, top_tokens

_GRAPH_CAPTURING = False


def graph_capturing():  # context: captured
    return _GRAPH_CAPTURING


def decode_step(x, comm):  # context: captured
    x = comm.all_reduce(x)
    x = comm.gather(x)
    sample_stats(x)
    top_tokens(x)
    note_capture(x)
    maybe_skip(x, x.shape[0] > 1)
    local_flag(x)
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
        _GRAPH_CAPTURING = False


def local_flag(x):  # context: captured
    # A local that happens to share the global flag's name is no flag.
    _GRAPH_CAPTURING = x.shape[0] > 1
    if not _GRAPH_CAPTURING:
        return x.tolist()  # want: CG101?
    return x
