"""Which binding of a local reaches a read (the host-value model). A host value bound in one arm of an
if statement does not reach a read in another arm, and a plain rebinding to a shape between the host
binding and the read, in a block that holds the read, replaces it on every path. A rebinding that
reads the name, one in a branch only, a read after the arms join, and arms inside a loop (the next
iteration takes the other arm) still carry the host value, as does a local bound from a host local
(`w = v * 2`, `start = end`), however many assignments deep. A tensor or an object made from a host
local is no host value: its shape and its fields are read from the device value, not baked again."""
import torch


class PagedDecoder:
    def forward(self, x, lens_cpu, table=None, flag=False):  # context: captured
        if table is None:
            n = int(lens_cpu.max())
            a = torch.empty(n, 4, device=x.device)  # want: CG102?
        else:
            size = x.size(1)
            table = table.to(dtype=torch.long)
            blocks = table.size(1)
            n = blocks * size
            a = torch.empty(n, 4, device=x.device)
        m = int(lens_cpu.max())
        m = blocks * size
        b = torch.empty(m, device=x.device)
        k = int(lens_cpu.max())
        k = k + 1
        c = torch.empty(k, device=x.device)  # want: CG102
        j = int(lens_cpu.max())
        if flag:
            j = j * 2
        d = torch.empty(j, device=x.device)  # want: CG102
        d = torch.empty((j, 4), device=x.device)  # want: CG102
        d = torch.empty((m, 4), device=x.device)
        p = int(lens_cpu.max())
        if flag:
            p = x.shape[0]
        d = torch.empty((p, 4), device=x.device)  # want: CG102
        if flag:
            q = int(lens_cpu.min())
        else:
            q = k
        e = torch.empty(q, device=x.device)  # want: CG102
        for i in range(2):
            if i == 0:
                r = int(lens_cpu.sum())
            else:
                a = torch.empty(r, device=x.device)  # want: CG102?
        v = int(lens_cpu.max())
        w = v * 2
        s = w
        f = torch.empty(s, device=x.device)  # want: CG102
        g = torch.empty((w, 4), device=x.device)  # want: CG102
        t = int(lens_cpu.max())
        scaled = (x * t).to(torch.int8)
        h = torch.empty(scaled.stride(0), device=x.device)
        box = Boxed(t, x)
        u = torch.empty_like(box.vals)
        top = max(t + 1, 4)
        y = x[:top]  # want: CG102
        return a, b, c, d, e, f, g, h, u, y


class Boxed:
    def __init__(self, n, vals):
        self.n = n
        self.vals = vals


def capture(dec: PagedDecoder, x, lens_cpu, table):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = dec.forward(x, lens_cpu, table)
    return g, out
