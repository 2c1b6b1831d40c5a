"""A parameter without a declared type is what the function's callers pass.
Where every call in the project passes a tensor, a truth test of the
parameter in captured code reads a device value on the host; where the
callers disagree (a tensor here, a number there), nothing is known. Where
every caller passes a host tensor, its read syncs nothing."""
import torch


def normalize(loss, num_tokens):  # context: captured
    # Every caller passes a device count.
    if num_tokens > 0:  # want: CG101
        loss = loss / num_tokens
    return loss


def scale(loss, factor):  # context: captured
    # One caller passes a tensor, another a number: not known.
    if factor > 1:
        loss = loss * factor
    return loss


def clip(loss, limit):  # context: captured
    # Every caller passes a host tensor: reading it syncs nothing.
    if limit > 0:
        loss = loss.clamp(max=float(limit))
    return loss


def forwarded(loss, count):  # context: captured
    # A parameter passed on keeps what the outer callers pass.
    return normalize(loss, count)


def fill(dst, src):  # context: captured
    # Every caller passes a tensor, but the int branch keeps tensors out.
    if isinstance(src, torch.Tensor):
        return dst.copy_(src)
    elif isinstance(src, (int, bool)):
        return dst.fill_(int(src))
    return dst


def _host_limit(loss, limit):  # context: captured
    # A private helper whose every caller passes a host tensor.
    if limit > 0:
        loss = loss * 2
    return loss
