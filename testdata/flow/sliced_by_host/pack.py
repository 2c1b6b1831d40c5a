"""Packed-sequence helpers run inside the captured step: each strips a padded row to the length
it reads from the device. The read is the hazard (a sync, and a length frozen into the graph); the
slice of a tensor it bounds is a device tensor, not a host value, so concatenating the slices bakes
nothing more into the graph than the read already did. Of a parameter nothing types, the slice is
host data only if the parameter is a list: an assumption, so a warning that names it."""
import torch


def valid_prefix(row: torch.Tensor, end):  # context: captured
    hits = (row == end).nonzero(as_tuple=True)[0]  # want: CG104
    return row[: hits[0].item() + 1]  # want: CG101 CG102


def first_tokens(tokens, lens):  # context: captured
    return tokens[: lens.max().item()]  # want: CG101 CG102


def merge(rows, end, tokens, lens):  # context: captured
    parts = [valid_prefix(rows[0], end)]
    for i in range(1, rows.shape[0]):
        parts.append(valid_prefix(rows[i], end)[1:] + i * end)
    head = first_tokens(tokens, lens)
    n = int(lens.sum())  # want: CG101
    sizes = [n, n]
    packed = torch.cat(parts)
    doubled = torch.cat([head, head])  # want: CG102~
    scratch = torch.zeros(sizes[0], device="cuda")  # want: CG102
    return packed, doubled, scratch


class Packer:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, rows, end, tokens, lens):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = merge(rows, end, tokens, lens)
