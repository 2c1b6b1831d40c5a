"""Replay-prep of a padded graph: a prefix copy bounded by the padded size (or that size plus one,
for cumulative lengths) refreshes everything the padded graph reads; one bounded by the real batch
size leaves the padded rows stale."""
import torch


class Buffers:
    pass


def make_buffers(max_bs):  # context: eager
    bufs = Buffers()
    bufs.cu_seqlens_k = torch.zeros(max_bs + 1, dtype=torch.int32, device="cuda")
    bufs.slot_mapping = torch.zeros(max_bs, dtype=torch.int64, device="cuda")
    return bufs


def decode(bufs):  # context: captured
    return bufs.cu_seqlens_k[1:] - bufs.cu_seqlens_k[:-1] + bufs.slot_mapping


def run(batches, max_bs):  # context: eager
    bufs = make_buffers(max_bs)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = decode(bufs)
    for batch in batches:
        metadata, bs = batch.metadata, batch.padded_size
        bufs.cu_seqlens_k[: bs + 1].copy_(metadata.cu_seqlens_k)
        n = batch.num_reqs
        bufs.slot_mapping[:n].copy_(metadata.slots)  # want: CG203
        g.replay()
        yield out[:n]
