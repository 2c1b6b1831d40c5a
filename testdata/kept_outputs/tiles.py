"""A tiled decoder whose stitcher is compiled with CUDA graphs, and the drivers around it."""
import torch
import torch.nn as nn


class TiledDecoder(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = w

    @torch.compile(mode="reduce-overhead", dynamic=False)
    def stitch(self, tiles):
        return torch.cat(tiles, dim=-1) @ self.w

    def decode_clip(self, z):
        tiles = [z[..., i::2] for i in range(2)]
        return self.stitch(tiles)  # want: CG205~ "returned through `TiledDecoder.decode_clip`"

    def decode_clip_owned(self, z):
        tiles = [z[..., i::2] for i in range(2)]
        return self.stitch(tiles).clone()

    def decode(self, zs):
        chunks = []
        for z in zs:
            chunks.append(self.decode_clip(z))
        return torch.cat(chunks, dim=0)

    def decode_owned(self, zs):
        chunks = []
        for z in zs:
            chunks.append(self.decode_clip_owned(z))
        return torch.cat(chunks, dim=0)


class Runner:
    def __init__(self, model, use_graphs):
        self.model = model
        if use_graphs:
            self.step = torch.compile(self.model, mode="max-autotune")
        else:
            self.step = self.model

    def run(self, xs):
        outs = {}
        for i, x in enumerate(xs):
            outs[i] = self.step(x)  # want: CG205~ "keeps it in `outs`"
        return [outs[i] for i in range(len(xs))]

    def run_reduced(self, xs):
        outs = {}
        for i, x in enumerate(xs):
            outs[i] = self.step(x).float().sum()
        return outs

