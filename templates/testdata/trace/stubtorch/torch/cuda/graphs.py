_CAPTURING = []


class CUDAGraph(object):
    def capture_begin(self, pool=None, capture_error_mode="global"):
        _CAPTURING.append(self)

    def capture_end(self):
        _CAPTURING.remove(self)

    def replay(self):
        pass

    def pool(self):
        return (id(self) & 0xFFFF, 1)


class graph(object):
    def __init__(self, cuda_graph, pool=None, stream=None):
        self.cuda_graph = cuda_graph

    def __enter__(self):
        self.cuda_graph.capture_begin()

    def __exit__(self, *exc):
        self.cuda_graph.capture_end()
        return False


def make_graphed_callables(fn, sample_args):
    g = CUDAGraph()
    with graph(g):
        fn(*sample_args)

    def replay(*args):
        g.replay()

    return replay
