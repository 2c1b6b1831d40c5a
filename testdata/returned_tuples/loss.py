"""A name unpacked from what a project helper returns is that element of the tuple it returns:
`mask, n = roll(mask)` where `roll` returns `r, r.sum()` binds `n` to a device count."""
import torch


def roll(t):
    r = torch.roll(t, -1, dims=-1)
    return r, r.sum()


def roll_twice(t):
    return roll(torch.roll(t, 1, dims=-1))


def roll_or_count(t, packed):
    if packed:
        return t, len(t)
    r = torch.roll(t, -1, dims=-1)
    return r, r.sum()


def roll_sized(t):
    r = torch.roll(t, -1, dims=-1)
    return r, r.numel()


def roll_three(t):
    r = torch.roll(t, -1, dims=-1)
    return r, r.sum(), r.max()


def normalize(loss, mask):
    mask, n = roll(mask)
    if n > 0:  # want: CG101
        loss = loss / n
    return loss * mask


def normalize_twice(loss, mask):
    mask, n = roll_twice(mask)
    if n > 0:  # want: CG101
        loss = loss / n
    return loss


def normalize_either(loss, mask):
    # One return gives a Python length, the other a tensor: the element is unknown.
    mask, n = roll_or_count(mask, False)
    if n > 0:
        loss = loss / n
    return loss


def normalize_sized(loss, mask):
    # numel() is a size: fixed for the graph, no read of tensor data.
    mask, n = roll_sized(mask)
    if n > 0:
        loss = loss / n
    return loss


def normalize_starred(loss, mask):
    # A starred target: positions are unknown.
    *rest, n = roll_three(mask)
    if n > 0:
        loss = loss / n
    return loss


def normalize_mismatched(loss, mask):
    # Two targets for a three-element tuple: not this element.
    mask, n = roll_three(mask)[:2]
    if n > 0:
        loss = loss / n
    return loss


class Runner:
    def __init__(self, loss, mask):
        self.graph = torch.cuda.CUDAGraph()
        self.loss = loss.cuda()
        self.mask = mask.cuda()

    def capture(self):
        with torch.cuda.graph(self.graph):
            a = normalize(self.loss, self.mask)
            b = normalize_twice(self.loss, self.mask)
            c = normalize_either(self.loss, self.mask)
            d = normalize_sized(self.loss, self.mask)
            e = normalize_starred(self.loss, self.mask)
            f = normalize_mismatched(self.loss, self.mask)
            self.out = a + b + c + d + e + f
