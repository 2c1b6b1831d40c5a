"""Closures read their enclosing function's variables where it calls them;
torch's state predicates (torch.compiler.is_compiling(),
torch.are_deterministic_algorithms_enabled(), torch.autograd._is_checkpoint_valid())
are bools."""
import torch


def gather_rounds(hidden_states, sizes, limit):  # context: captured
    def step():  # context: captured
        nonlocal left
        cur = left.minimum(limit)
        left -= cur
        return cur.tolist()  # a CPU tensor: no sync

    def on_device():  # context: captured
        return flags.tolist()  # want: CG101

    left = sizes
    left = torch.tensor(left)
    flags = torch.zeros(4, device="cuda")
    step()
    on_device()
    while left.sum() > 0:
        step()
    if torch.compiler.is_compiling():
        return hidden_states
    if torch.are_deterministic_algorithms_enabled() and torch.autograd._is_checkpoint_valid():
        return hidden_states
    return hidden_states


def capture(g, h, sizes):  # context: eager
    with torch.cuda.graph(g):
        gather_rounds(h, sizes, 4)
