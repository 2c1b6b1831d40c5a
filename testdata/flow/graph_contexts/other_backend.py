"""The same lazy runner on a backend capguard has no table for: `with accel.graph(self.graph):`
takes the graph this function replays, so it is the capture, and the buffers bound before it in
the same block are its set-up."""
import accel
import torch


def step(x):  # context: captured
    n = int(x.sum())  # want: CG101
    return x[:n] * 2  # want: CG102


class LazyRunner:
    def __init__(self):
        self.graph = None
        self.static_in = None
        self.static_out = None

    def run(self, x):  # context: eager
        if self.graph is None:
            self.static_in = x.clone()
            self.static_out = x.clone()
            self.graph = accel.Graph()
            with accel.graph(self.graph):
                self.static_out.copy_(step(self.static_in))
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out
