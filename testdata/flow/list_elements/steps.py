"""Lists of tensors in captured code. An element of a Python list is what was put in it: a list
of per-step outputs made of `None` placeholders and filled with device tensors holds device
tensors, so copying one into the output copies device memory; so does one stored by unpacking a
call's results (`dq_steps[i], lse[i], *_ = attn_backward(...)`), whose kind is not known. A
loop's target is what the loop binds, not what the name held before the loop: a list of lists of
gradients read row by row gives device tensors; a comprehension's target is each element, inside
the comprehension only. A list of numbers (`[int(s) for s in sizes]` too) still gives host data:
a device tensor built from one element is a host-to-device copy."""
import torch
from fused import attn_step, attn_step_backward


def ring_attention(q, kv, out):  # context: captured
    per_step = [None, None]
    for i in range(3):
        res = attn_step(q, kv[i])
        per_step[i % 2] = res[0]
        if i > 0:
            out[i - 1].copy_(per_step[(i - 1) % 2])
    return out


def ring_backward(q, kv, dq):  # context: captured
    dq_steps = [None, None]
    lse = [None, None]
    for i in range(2):
        dq_steps[i], lse[i], *_ = attn_step_backward(q, kv[i])
        dq[i].copy_(dq_steps[i])
    return dq


def average_groups(groups):  # context: captured
    grads = [rows[0] for rows in groups.values()]
    for g in grads:
        g.mul_(0.5)
    for grads in groups.values():
        for grad in grads[1:]:
            grad.copy_(grads[0])


def normalise(weights, probs):  # context: captured
    p = weights.sum()
    weights.div_(p)
    probs = [float(p) for p in probs]
    return weights, probs


def resized(x, sizes, dim):  # context: captured
    sizes = [int(s) for s in sizes]
    d = dim % len(sizes)
    rows = int(sizes[d])
    return x.view(rows, -1)


def scratch(n):  # context: captured
    sizes = [n, 2 * n]
    lens = []
    lens.append(n)
    first = torch.tensor(sizes[0], device="cuda")  # want: CG103
    second = torch.tensor(lens[0], device="cuda")  # want: CG103
    return first, second


class Runner:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q, kv, out, groups, n):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = ring_attention(q, kv, out)
            average_groups(groups)
            self.dq = ring_backward(q, kv, out)
            self.extra = scratch(n)
            self.norm = normalise(q, [0.5, 0.5])
            self.view = resized(q, q.shape, 0)
