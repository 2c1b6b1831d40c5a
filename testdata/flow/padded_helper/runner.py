"""The replay-prep refreshes each padded graph input through a helper that copies the batch into
its parameter's prefix. The helper's parameter is a graph buffer where a replay-prep call passes
one: copying the slot mapping's prefix and never resetting its tail leaves a previous batch's
slots in the padded rows, which write into live KV-cache slots. A helper that fills the tail, and
one given only token ids (whose padded rows' outputs are discarded), are no finding."""
import torch


def copy_prefix(dst, src):  # context: replay-prep
    dst[: src.shape[0]].copy_(src)  # want: CG203


def pad_and_fill(dst, src, pad):  # context: replay-prep
    dst[: src.shape[0]].copy_(src)
    dst[src.shape[0]:].fill_(pad)


def copy_tokens(dst, src):  # context: replay-prep
    dst[: src.shape[0]].copy_(src)


class Runner:
    def __init__(self, max_bs):
        self.slot_mapping = torch.full((max_bs,), -1, dtype=torch.int64, device="cuda")
        self.seq_lens = torch.ones(max_bs, dtype=torch.int32, device="cuda")
        self.input_ids = torch.zeros(max_bs, dtype=torch.int64, device="cuda")
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, model):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = model(self.input_ids, self.slot_mapping, self.seq_lens)

    def replay(self, input_ids, slot_mapping, seq_lens):  # context: eager
        copy_prefix(self.slot_mapping, slot_mapping)
        pad_and_fill(self.seq_lens, seq_lens, 1)
        copy_tokens(self.input_ids, input_ids)
        self.graph.replay()
        return self.out
