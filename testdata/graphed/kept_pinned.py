"""Copies from pinned host buffers in a captured step. A buffer the object keeps (an attribute, an
element of a kept list, a local bound to one) is no temporary: the graph copies from its address,
which stays the buffer's, and a host function the graph launches refreshes it before each copy. A
pinned temporary is freed after the call, and a kept buffer that the captured function itself writes
on the host is written once, at capture: both are reported."""
import torch


class Offloader:
    def __init__(self, n):
        self.graph = torch.cuda.CUDAGraph()
        self.host = torch.zeros(n, pin_memory=True)
        self.ring = [torch.zeros(n, pin_memory=True) for _ in range(2)]
        self.dev = torch.zeros(n, device="cuda")
        self.out = None

    def _produce(self, i):
        self.ring[i].copy_(torch.rand(self.host.shape))

    def step(self, i, vals):
        torch.cuda.current_stream().launch_host_func(lambda: self._produce(i))
        self.dev.copy_(self.host, non_blocking=True)
        buf = self.ring[i]
        self.dev.add_(buf.to("cuda", non_blocking=True))
        tmp = torch.tensor(vals, pin_memory=True)
        self.dev.add_(tmp.to("cuda", non_blocking=True))  # want: CG103
        return self.dev

    def stage(self, vals):
        pin = self.ring[0]
        pin[:2] = torch.tensor(vals[:2])
        self.dev.copy_(pin, non_blocking=True)  # want: CG103
        return self.dev

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = self.step(0, [1.0, 2.0])
            self.stage([3.0, 4.0])
