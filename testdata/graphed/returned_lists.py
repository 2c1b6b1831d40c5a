"""Elements of a list a project function returns, read on the host in a captured step. The helper
places them: built on the host (`torch.arange(4, device="cpu")`) their `.item()` reads host memory
and waits for no GPU work; built on the device it is a sync. The loop takes them directly, through
`zip`, through `enumerate`, or from a name the call's tuple unpacks."""
import torch


def host_tables(n):
    out = []
    for i in range(n):
        out.append(torch.arange(4, device="cpu") * 2)
    return out


def device_tables(n):
    out = []
    for i in range(n):
        out.append(torch.arange(4, device="cuda") * 2)
    return out


def both_tables(n):
    return host_tables(n), device_tables(n)


class TableStep:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(4, device="cuda")
        self.names = ["a", "b"]
        self.out = None

    def step(self, x):
        sizes = []
        for t in host_tables(2):
            sizes.append(t.sum().item())
        for name, t in zip(self.names, host_tables(2)):
            sizes.append(t.max().item())
        for i, t in enumerate(host_tables(2)):
            sizes.append(t.min().item())
        host, dev = both_tables(2)
        for t in host:
            sizes.append(t.sum().item())
        for t in dev:
            sizes.append(t.sum().item())  # want: CG101
        for t in device_tables(2):
            sizes.append(t.sum().item())  # want: CG101
        return x * 2, sizes

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out, _ = self.step(self.x)
