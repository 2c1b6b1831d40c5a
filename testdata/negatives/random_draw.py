"""A random draw before capture is not a derivation of the static inputs: moving
it into the graph would change what the step computes, so CG202 leaves it (kept
alive here: a draw the function drops is freed memory the graph still reads,
CG202's constant case, in testdata/graphed/random_operands.py)."""
import torch


def capture_sampler(g, logits, bs, vocab, keep):
    noise = torch.randint(0, vocab, (bs,), device=logits.device)
    perm = torch.randperm(bs, device=logits.device)
    with torch.cuda.graph(g):
        out = logits.gather(1, noise[:, None]) + perm[:, None]
    keep.append((noise, perm))
    return out
