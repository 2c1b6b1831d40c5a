"""Captures tried inside a `try` whose handler goes on without the graph (a benchmark that times
the graph when it can, a runner that falls back to eager steps). A hazard whose only outcome is a
failed capture (a host sync, a copy from pageable host memory, a data-dependent shape) then costs
the graph, not the result: a warning that names the handler (probe cg101_caught_fallback_policy).
A hazard that does not fail the capture (a value baked in from a CPU mirror) stays an error: the
handler never runs (probe cg102_caught_baked_pos). So does every hazard under a capture whose
failure is not caught: a raw capture_begin() that the error leaves open (probe
cg101_caught_unended_pos), a handler that raises again, a second capture with no try at all."""
import torch

LUT = torch.tensor([0.0, 0.5, 1.0, 1.5])


def reference_sum(values: torch.Tensor, offsets: torch.Tensor):  # context: captured
    out = []
    for i in range(offsets.numel() - 1):
        s = int(offsets[i])  # want: CG101~
        e = int(offsets[i + 1])  # want: CG101~
        out.append(values[s:e].sum())  # want: CG102~
    return torch.stack(out)


class Batch:
    def __init__(self, n):  # context: eager
        self.x = torch.zeros(n, 64, device="cuda")
        self.lens_cpu = torch.ones(n, dtype=torch.int64)

    def fill(self, lens):  # context: eager
        self.lens_cpu.copy_(lens)

    def reference_scaled(self):  # context: captured
        n = int(self.lens_cpu.max())
        top = self.x.abs().max().item()  # want: CG101~
        idx = torch.tensor([0, 1], device="cuda")  # want: CG103~
        return torch.clamp(self.x[idx], min=top, max=n)  # want: CG102~, CG102


def dequant(codes: torch.Tensor):  # context: captured
    table = LUT.to(codes.device)  # want: CG103~
    return table[codes.long()]


def make_dequant():  # context: eager
    lut_cpu = torch.tensor([0.0, 0.25, 0.5, 0.75])

    def inner(codes: torch.Tensor):  # context: captured
        return lut_cpu.to(codes.device)[codes.long()]  # want: CG103

    return inner


class Staged:
    def __init__(self):  # context: eager
        self.host = torch.zeros(4)

    def stage(self, x: torch.Tensor):  # context: captured
        return self.host.to(x.device) + x  # want: CG103


def _graph_or_eager(fn):  # context: eager
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()

    def replay():
        g.replay()
        return out

    return replay


def maybe_graph(fn):  # context: eager
    try:
        return _graph_or_eager(fn)
    except Exception:
        return fn


def bench(values, offsets, batch: Batch, lens):  # context: eager
    batch.fill(lens)
    a = maybe_graph(lambda: reference_sum(values, offsets))
    b = maybe_graph(batch.reference_scaled)
    maybe_graph(lambda: dequant(values))
    inner = make_dequant()
    maybe_graph(lambda: inner(values))
    st = Staged()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        st.stage(values)
    return a(), b()
