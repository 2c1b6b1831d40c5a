"""What reads the host and what does not, under capture (DESIGN.md, measured on an H200):
a CPU tensor's .tolist() syncs nothing; int(x.max()) of a device tensor is a capture error;
x[mask] = v is a masked fill and repeat_interleave with an int count has a fixed size; a
tensor built without a device (CPU by default) copies nothing to the GPU."""
import torch


def capture_reads(g, x, mask, v, n: int, counts_list):
    cpu_idx = torch.tensor([0, 1, 2])
    counts = torch.tensor(counts_list, device=x.device)
    host = torch.zeros(4, dtype=torch.int32, pin_memory=True)
    dev_buf = torch.zeros(4, dtype=torch.int32, device="cuda")  # want: CG202
    with torch.cuda.graph(g):
        ids = cpu_idx.tolist()
        first = cpu_idx[0].item()
        moved = cpu_idx.cpu()
        m = int(x.max())  # want: CG101
        f = float(x.sum())  # want: CG101
        k = x.shape[0] + x.numel() + x.dim() + len(x) + x.size(0)
        if x.shape[0] > 2 and x.dtype == torch.float32:
            pass
        if (x > 0).any():  # want: CG101
            pass
        while x.sum() > 0:  # want: CG101
            break
        assert x.all(), "x must be positive"  # want: CG101
        assert x.shape[0] == n
        if torch.equal(x, v):  # want: CG101
            pass
        same = torch.equal(cpu_idx, cpu_idx)
        x[mask] = v
        y = x.repeat_interleave(2)
        z = x.repeat_interleave(n)
        w = x.repeat_interleave(k)
        u = torch.repeat_interleave(x, counts, output_size=16)
        bad = torch.repeat_interleave(x, counts)  # want: CG104
        sel = x[mask]
        pos = x > 0
        sel2 = x[pos]  # want: CG104
        nz = cpu_idx.nonzero()
        nz_dev = x.nonzero()  # want: CG104
        lst = torch.tensor([1, 2])
        on_dev = torch.tensor([1, 2], device="cuda")  # want: CG103
        up = lst.cuda()  # want: CG103
        up2 = lst.to(x.device)  # want: CG103
        dev_buf.copy_(host)  # want: CG103
        dev_buf.cuda()
        window = torch.tensor([2, 3, 5])
        width = int(window.prod())
        head = x[:, :width]
        cols = cpu_idx.tolist()
        part = x[:, cols[0]:cols[2]]
        live = counts.tolist()  # want: CG101
        bad_width = x[:, :live[0]]  # want: CG102
    return head, part, bad_width, ids, first, moved, m, f, same, y, z, w, u, bad, sel, sel2, nz, nz_dev, on_dev, up, up2


def capture_scalar_fill(g, x, mask, value):
    """A host read binds `value` after the checks that read the parameter: the checks bake nothing
    (torch's is_* predicates launch nothing, and `value` is still the parameter there); the fill
    after the read does. In a loop, a read bound in one iteration is baked into the next one's clamp."""
    with torch.cuda.graph(g):
        assert torch.is_tensor(value) or isinstance(value, float)
        if torch.is_tensor(value) and torch.is_floating_point(value):
            value = value.item()  # want: CG101
        out = x.masked_fill(mask, value)  # want: CG102
        step = 1.0
        for i in range(2):
            out = out.clamp(max=step)  # want: CG102
            step = x[i].item()  # want: CG101
    return out
