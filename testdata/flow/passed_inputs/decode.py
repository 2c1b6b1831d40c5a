"""Branches for an absent input. The capture passes the page table explicitly, read from a step
state the analysis cannot prove non-None: the `table is None` branch runs under capture only if
that value is None, so its host sync is a warning that names the condition. Where a capture
leaves the input out (its default None applies), the branch runs under every such capture:
errors."""
import torch


def paged_decode(q, cache, lens, table=None):  # context: captured
    if table is None:
        width = int(lens.max().item())  # want: CG101?
        return q * cache[:, :width].sum(1)  # want: CG102?
    pages = cache[table.long()]
    return q * pages.sum((1, 2))


def dense_decode(q, cache, lens, table=None):  # context: captured
    if table is None:
        width = int(lens.max().item())  # want: CG101
        return q * cache[:, :width].sum(1)  # want: CG102
    return q * cache[table.long()].sum((1, 2))
