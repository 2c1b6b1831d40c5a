"""Static buffers kept in a dict (`self.static["slot_mapping"]`) and written through a local alias of
it in the method that replays; the batch size is the batch's own (`bs = ids.size(0)`), and the
graph replayed is the padded one above it, so a `[:bs]` prefix leaves the padded rows stale (CG203).
The negatives: a tail reset through the alias (`fill_`, `zero_`), a write into a dict the method
builds itself (not graph state), and a bound that is the padded size by its binding."""
import torch


class PagedRunner:
    def __init__(self, model, max_bs, width, dev):
        self.model = model
        self.sizes = [1, 2, 4, 8]
        self.static = {
            "ids": torch.zeros(max_bs, dtype=torch.int64, device=dev),
            "slot_mapping": torch.zeros(max_bs, dtype=torch.int64, device=dev),
            "seq_lens": torch.zeros(max_bs, dtype=torch.int32, device=dev),
            "page_table": torch.zeros((max_bs, width), dtype=torch.int32, device=dev),
        }
        self.graphs = {}

    def capture(self):
        s = self.static
        for bs in self.sizes:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.out = self.model(s["ids"][:bs], s["slot_mapping"][:bs], s["seq_lens"][:bs], s["page_table"][:bs])
            self.graphs[bs] = g

    def step(self, ids, slots, lens, pages):
        bs = ids.size(0)
        g = self.graphs[next(x for x in self.sizes if x >= bs)]
        s = self.static
        s["ids"][:bs] = ids
        s["slot_mapping"][:bs] = slots  # want: CG203
        s["page_table"][:bs, : pages.size(1)] = pages  # want: CG203
        g.replay()
        return self.out

    def step_reset(self, ids, slots, lens, pages):
        bs = ids.size(0)
        g = self.graphs[next(x for x in self.sizes if x >= bs)]
        s = self.static
        s["slot_mapping"].fill_(-1)
        s["slot_mapping"][:bs] = slots
        s["seq_lens"].zero_()
        s["seq_lens"][:bs] = lens
        s["page_table"].fill_(0)
        s["page_table"][:bs, : pages.size(1)] = pages
        g.replay()
        return self.out

    def step_padded(self, ids, slots):
        n = ids.size(0)
        bs = next(x for x in self.sizes if x >= n)
        local = {"slot_mapping": torch.empty_like(slots)}
        local["slot_mapping"][:n] = slots
        self.static["slot_mapping"][:bs] = torch.nn.functional.pad(slots, (0, bs - n), value=-1)
        self.graphs[bs].replay()
        return self.out
