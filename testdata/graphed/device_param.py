"""A project function that places its result on the device its caller names: the device at a
call is the argument's (or the parameter's default). Reading a tensor a call put on the CPU is
no host sync; reading one a call put on the GPU is, and so is a copy to the device the caller
names (a host-to-device copy under capture where a call passes the GPU's device)."""
import torch


def band_mask(rows, cols, width, device="cuda"):
    mask = torch.ones(rows, cols, dtype=torch.bool, device=device)
    return mask.triu(-width).tril(width)


def load_table(n, device):
    table = torch.arange(n, dtype=torch.int32)
    return table.to(device)  # want: CG103


class Sampler:
    def window(self, n, device="cpu"):
        return torch.zeros(n, dtype=torch.int64, device=device)


def step(x):
    host_mask = band_mask(8, 8, 2, device="cpu")
    count = int(host_mask.sum().item())
    table = load_table(count, "cpu")
    first = table.tolist()[0]
    window = Sampler().window(4)
    last = window[-1].item()
    dev_mask = band_mask(8, 8, 2)
    width = int(dev_mask.sum().item())  # want: CG101
    placed = load_table(4, x.device)
    top = placed.max().item()  # want: CG101
    return x[:, :8] * (first + last + width + top)


def capture(x):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step(x)
    return g, out
