"""A chunked video decoder whose clip decoder is compiled with CUDA graphs, streamed by a generator."""
import torch
import torch.nn as nn


class ChunkedDecoder(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.w = w

    @torch.compile(mode="reduce-overhead", dynamic=False)
    def decode_tile(self, z):
        return z @ self.w

    def decode_clip(self, z):
        return self.decode_tile(z)  # want: CG205~ "the list it makes of `ChunkedDecoder.decode_chunks`'s items"

    def decode_chunks(self, zs, overlap=None):
        for z in zs:
            clip = self.decode_clip(z)
            chunk = clip[:, :4]
            if overlap is not None:
                chunk = torch.lerp(overlap, chunk, 0.5)
            yield chunk

    def decode_all(self, zs):
        return torch.cat(list(self.decode_chunks(zs)), dim=0)

    def decode_streamed(self, zs, out):
        for i, chunk in enumerate(self.decode_chunks(zs)):
            out[i].copy_(chunk)
        return out
