"""Line coverage under capture, for the tracer's tests (stand-in torch): a
runner captures the decode forward of a model with an optional adapter and
a prefill path. The capture passes no adapter (through an attribute, which
static analysis cannot read as a constant) and never runs prefill, so of
the three host reads static analysis reports in captured code:

- COVER-RAN runs under capture (the trace proves the finding);
- COVER-BRANCH is in an `if adapter is not None` branch of a function the
  capture entered, never taken (a warning saying so);
- COVER-NEVER is in a function the capture never entered (a warning)."""

import torch

DEV = "cuda"


class Model(object):
    def __init__(self):
        self.scale = torch.full((1,), 2, dtype=torch.int32, device=DEV)
        self.prefill_mode = False

    def forward(self, x, adapter=None):
        n = self.scale.item()  # COVER-RAN
        h = x * n
        if adapter is not None:
            k = adapter.item()  # COVER-BRANCH
            h = h + k
        if self.prefill_mode:
            h = self.prefill(h)
        return h

    def prefill(self, h):
        m = h.sum().item()  # COVER-NEVER
        return h * m


class Runner(object):
    def __init__(self, model, adapter=None):
        self.model = model
        # Not a constant to static analysis (an attribute any code may set):
        # the branch under it stays in the static findings.
        self.adapter = adapter
        self.x = torch.zeros(4, dtype=torch.int32, device=DEV)
        self.graphs = {}

    def capture(self):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            self.out = self.model.forward(self.x, self.adapter)
        self.graphs[4] = g

    def run(self, x):
        self.x.copy_(x)
        self.graphs[4].replay()
        return self.out


def main():
    r = Runner(Model())
    r.capture()
    for i in range(4):
        r.run(torch.full((4,), i, dtype=torch.int32, device=DEV))
    print("cover engine done")


if __name__ == "__main__":
    main()
