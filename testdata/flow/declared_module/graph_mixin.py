"""A graph mixin that model classes mix in: it fills the static buffers the runner's graph reads.
The runner holds the model as a declared `torch.nn.Module`, and the engine later swaps its model
for the runner (self.model = GraphRunner(self.model)), so to a flow-insensitive analysis the
runner's model may also be the runner, which has no `fill_buffers`. An object without the method
would fail at the call: the call is on a project subclass of the declared class that has it
(resolution hierarchy), here the model mixing the mixin in. The negative: a method that only an
unrelated class (not a module) defines stays unresolved, so its hazard is not reported."""
import torch


class GraphMixin:
    def make_buffers(self, max_bs, width, dev):
        return {
            "slot_mapping": torch.zeros(max_bs, dtype=torch.int64, device=dev),
            "page_table": torch.zeros((max_bs, width), dtype=torch.int32, device=dev),
        }

    def fill_buffers(self, meta, slots, pages):  # context: replay-prep resolution: hierarchy
        bufs = meta.buffers
        n = slots.size(0)
        bufs["slot_mapping"].fill_(-1)
        bufs["slot_mapping"][:n] = slots
        bufs["page_table"][:n, : pages.size(1)] = pages  # want: CG203~


class TinyDecoder(torch.nn.Module, GraphMixin):
    def __init__(self, dim):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, slots, pages):  # context: captured
        return self.proj(pages.float())


class PageStats:
    def refresh_stats(self, meta, pages):  # context: eager
        bufs = meta.buffers
        k = pages.size(0)
        bufs["page_table"][:k, : pages.size(1)] = pages
