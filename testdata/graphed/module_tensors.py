"""Module-level tensors read by a captured step. Built without a device, they are on the CPU (the
default device here): `.item()` of one reads host memory and waits for no GPU work, so it is no
host sync, though the value it reads is baked into the graph (a warning that names the assumption
that the tensor is written between replays); moving one to the GPU under capture is a copy from
pageable host memory, which capture refuses. A module tensor that a function rebinds (`global`)
has no known device."""
import torch

BLOCK = torch.tensor(64, dtype=torch.int64)
LUT = torch.tensor([0.0, 0.5, 1.0, 1.5], dtype=torch.float32)
SCALE = torch.ones(1)


def reset_scale(dev):
    global SCALE
    SCALE = torch.ones(1, device=dev)


class Quantizer:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(256, device="cuda")
        self.out = None

    def step(self, x):
        n = BLOCK.item()
        lut = LUT.to(x.device)  # want: CG103
        s = SCALE.item()  # want: CG101
        return x[:n] * lut[1] * s  # want: CG102~

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = self.step(self.x)
