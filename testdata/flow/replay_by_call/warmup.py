"""Calls before a capture are set-up, not preparation between replays: a warm-up that binds fresh
buffers, then calls a helper that captures and replays each size, gives the graph its own
buffers (the helper captures before each replay it makes). So does a routine that builds its
state, calls a step that replays, and captures only afterwards."""
import torch


class Decoder:
    def __init__(self, width):  # context: eager
        self.bufs = torch.zeros(width, device="cuda")
        self.graph = torch.cuda.CUDAGraph()
        self.out = None

    def forward(self):  # context: captured
        return self.bufs * 2

    def capture_and_replay(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.forward()
        self.graph.replay()
        return self.out

    def launch(self):  # context: eager
        self.graph.replay()
        return self.out

    def resize(self, width):  # context: eager
        self.bufs = torch.zeros(width, device="cuda")


def warm_up(dec: Decoder, widths):  # context: eager
    for w in widths:
        dec.resize(w)
        dec.capture_and_replay()


def build(dec: Decoder, width):  # context: eager
    dec.resize(width)
    dec.launch()
    dec.capture_and_replay()
