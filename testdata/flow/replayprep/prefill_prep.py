"""Replay-prep with a prefill branch: the metadata builder the replay prep calls rebinds a tensor the
graph reads under `not meta.is_decoding`, which decode graphs never take. Like captured code under a
prefill test, that is a conditional warning (it runs before a replay only if prefill is captured),
while the decode path's rebinding is an error."""
import torch


class Meta:
    pass


def build_meta(meta, seq_lens):  # context: replay-prep
    if not meta.is_decoding:
        meta.starts = seq_lens.cumsum(0).to(torch.int32)  # want: CG201?
        return meta
    meta.lens = seq_lens.to(torch.int32)  # want: CG201~
    return meta


def run(batches, bufs):
    meta = Meta()
    meta.is_decoding = True
    meta.lens = bufs.lens
    meta.starts = bufs.starts
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = bufs.x[meta.lens] + meta.starts
    for batch in batches:
        build_meta(meta, batch.seq_lens)
        g.replay()
        yield out
