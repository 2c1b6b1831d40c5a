"""Methods that switch graph use on or off, or say whether it is supported, are no graph protocol:
a model whose mixin lets a caller turn its decoding graphs off (`disable_cuda_graphs`,
`maybe_enable_cuda_graphs`), or that answers `supports_cuda_graph_compilation`, is not code a
framework captures by convention, so its forward stays eager. A class that has such a switch and a
protocol method too (the metadata hook a graph runner calls) is still captured by convention."""
import torch


class WithOptionalGraphs:
    def disable_cuda_graphs(self):
        self.use_graphs = False

    def maybe_enable_cuda_graphs(self):
        self.use_graphs = True


class SpeechModel(WithOptionalGraphs, torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.use_graphs = True

    def forward(self, x):  # context: eager
        return x * x.abs().max().item()


class ServedModel(torch.nn.Module):
    def supports_cuda_graph_compilation(self):
        return True

    def forward(self, x):  # context: eager
        return x + x.sum().item()


class SwitchedBackend(WithOptionalGraphs):
    def init_forward_metadata_capture_cuda_graph(self, bs):
        self.bs = bs

    def forward_decode(self, q):  # context: captured
        return q * q.max().item()  # want: CG101~


class Calibrator:
    """A graph setting said as a noun phrase (`..._cudagraph_enabled`, `..._capture_sizes`) is a
    query too: replaying calibration batches here is eager code, not a step between graph replays."""

    def _stage_cudagraph_enabled(self):
        return False

    def stream_cuda_graph_capture_sizes(self):
        return [1, 2, 4]

    def forward_replay_batch(self, batch):  # context: eager
        self.last = batch.float().mean().item()
        return self.last
