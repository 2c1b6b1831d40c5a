"""One graph per batch size in a dict (`self.graphs[bs].replay()`), with the replay-prep done in
methods the replay method calls before the replay (issue 17). What runs there is replay-prep:
prefix writes that leave a padded tail stale (CG203, by copy_ and by slice assignment, in one
dimension or a corner of two), and storage swaps of buffers the graphs read (CG201: set_, .data =,
and resize_, a warning that assumes the buffer grows). The captured forward binding a fresh tensor
to state the replay method reads after the replay is CG201 too (the captures run in a loop). The
negatives: tails reset by slice assignment, a full-width write, a reshape of a buffer's own .data,
and state written in place."""
import torch


class Decoder(torch.nn.Module):
    def __init__(self, max_bs, dev):
        super().__init__()
        self.logits = torch.zeros((max_bs, 32), device=dev)
        self.last_hidden = None

    def forward(self, ids, slots, tables, lens, pos):  # context: captured
        h = ids.float()[:, None] + slots[:, None] + tables.sum(-1, keepdim=True) + lens[:, None] + pos[:, None]
        self.last_hidden = torch.cat([h, h], dim=-1)  # want: CG201
        self.logits[: h.shape[0]].copy_(h.expand(-1, 32))
        return self.logits[: h.shape[0]]


class GraphRunner:
    def __init__(self, model: Decoder, max_bs, dev):
        self.model = model
        self.input_ids = torch.zeros(max_bs, dtype=torch.int64, device=dev)
        self.slot_mapping = torch.zeros(max_bs, dtype=torch.int64, device=dev)
        self.block_tables = torch.zeros((max_bs, 16), dtype=torch.int32, device=dev)
        self.context_lens = torch.zeros(max_bs, dtype=torch.int32, device=dev)
        self.positions = torch.zeros(max_bs, dtype=torch.int64, device=dev)
        self.graphs = {}
        self.outputs = {}

    def capture(self, sizes):
        for bs in sizes:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.outputs[bs] = self.model(self.input_ids[:bs], self.slot_mapping[:bs], self.block_tables[:bs],
                                              self.context_lens[:bs], self.positions[:bs])
            self.graphs[bs] = g

    def _write_inputs(self, ids, slots):  # context: replay-prep
        n = ids.shape[0]
        self.input_ids[:n] = ids
        self.slot_mapping[:n] = slots  # want: CG203

    def _write_tables(self, bs, tables):  # context: replay-prep
        self.block_tables[:bs, : tables.shape[1]] = tables  # want: CG203

    def _write_paged(self, bs, tables, lens):  # context: replay-prep
        # Paged readers bound each row's columns by its length, refreshed here: the columns past the
        # width are never read.
        self.block_tables[:bs, : tables.shape[1]] = tables
        self.context_lens[: lens.shape[0]] = lens
        self.context_lens[lens.shape[0]:] = 1

    def _write_positions(self, pos):  # context: replay-prep
        self.positions.data = self.positions.data.reshape(-1)
        self.positions.set_(pos)  # want: CG201

    def _grow(self, width):  # context: replay-prep
        self.block_tables.resize_(self.block_tables.shape[0], width)  # want: CG201~

    def run(self, bs, ids, slots, tables, lens, pos):
        self._write_inputs(ids, slots)
        self._write_tables(bs, tables)
        self._write_paged(bs, tables, lens)
        self._write_positions(pos)
        if tables.shape[1] > self.block_tables.shape[1]:
            self._grow(tables.shape[1])
        self.graphs[bs].replay()
        return self.outputs[bs][: ids.shape[0]], self.model.last_hidden, self.model.logits
