"""The severity policy: an error is a proof. The same hazard (a host read of a device tensor)
in three functions the decode capture runs: reached through resolved and annotated calls it is
an error; reached through a call resolved by method name only (the rope cache arrives as a
parameter nothing in the project passes) it is a warning that names the call it assumed."""
import torch


class RMSNorm(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):  # context: captured resolution: resolved
        if x.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan in decode input")
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class PagedKV:
    def __init__(self, blocks):
        self.blocks = blocks

    def gather_lengths(self, block_table):  # context: captured resolution: annotated
        longest = block_table.amax().item()  # want: CG101
        return longest


class RopeTable:
    def refresh_positions(self, positions):  # context: captured resolution: name
        top = positions.max().item()  # want: CG101~
        return top + 1


class DecodeGraph:
    def __init__(self, dim, kv: PagedKV):
        self.norm = RMSNorm(dim)
        self.kv = kv
        self.graph = torch.cuda.CUDAGraph()

    def step(self, x, block_table, positions, rope):  # context: captured resolution: resolved
        h = self.norm(x)
        self.kv.gather_lengths(block_table)
        rope.refresh_positions(positions)
        return h

    def capture(self, x, block_table, positions, rope):
        with torch.cuda.graph(self.graph):
            self.out = self.step(x, block_table, positions, rope)


def build_decoder(dim, kv, x, block_table, positions, rope):  # context: eager
    runner = DecodeGraph(dim, kv)
    runner.capture(x, block_table, positions, rope)
    return runner
