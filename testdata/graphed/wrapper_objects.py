"""Objects built before the capture region. A metadata object over the static inputs is derived
from them: replays keep the one built at capture (CG202). A wrapper built only from sizes and
flags allocates its own buffers and is planned again before each replay: it derives nothing
from the inputs, and reading it in the region is what the graph is for."""
import torch


class DecodeMetadata:
    def __init__(self, seq_lens, block_tables):
        self.seq_lens = seq_lens
        self.max_len = seq_lens.max()
        self.block_tables = block_tables


class PagedAttention:
    def __init__(self, max_tokens, max_batch, num_pages, use_graph=False):
        self.use_graph = use_graph
        self.indptr = torch.zeros(max_batch + 1, dtype=torch.int32, device="cuda")
        self.indices = torch.zeros(num_pages, dtype=torch.int32, device="cuda")
        self.out = torch.empty(max_tokens, 8, 64, device="cuda")

    def plan(self, indptr, indices):
        self.indptr[: indptr.numel()].copy_(indptr)  # want: CG203
        self.indices[: indices.numel()].copy_(indices)  # want: CG203

    def forward(self, q, cache):
        return self.out.copy_(q) + cache[self.indices[:1]].sum()


def capture_with_metadata(g, q, cache, seq_lens, block_tables, layers):
    meta = DecodeMetadata(seq_lens, block_tables)  # want: CG202
    with torch.cuda.graph(g):
        for layer in layers:
            q = layer(q, cache, meta)
    return q


def capture_with_wrapper(g, q, cache, indptr, indices):
    batch = 8
    chunk = 48
    tokens = batch + chunk
    pages = (4096 + 255) // 256 * (batch + 1)
    attn = PagedAttention(tokens, batch + 1, pages, use_graph=True)
    attn.plan(indptr, indices)
    attn.forward(q, cache)
    with torch.cuda.graph(g):
        out = attn.forward(q, cache)
    attn.plan(indptr, indices)
    g.replay()
    return out


def capture_with_keywords(g, model, input_ids, bs, max_s):
    input_lengths = [max_s] * bs
    lengths = torch.tensor(input_lengths, dtype=torch.int32, device="cuda")
    model(input_ids, input_lengths=lengths)
    with torch.cuda.graph(g):
        model(input_ids, input_lengths=lengths, cache=model.input_lengths)
    return g, lengths


class AllGatherRunner:
    """A runner built from a process group and sizes: it allocates and holds its own buffers."""

    def __init__(self, group, rows, cols):
        self.group = group
        self.world = group.size()
        self.buf = torch.empty(rows * self.world, cols, device="cuda")

    def __call__(self, x):
        self.buf[: x.shape[0]].copy_(x)
        return self.buf


def capture_with_runner(g, x, group):
    # The runner keeps `group` as it is and computes only its size from it: whatever `group` is,
    # the runner is set-up, not a snapshot of data.
    runner = AllGatherRunner(group, 8, 64)
    with torch.cuda.graph(g):
        out = runner(x)
    return out


def capture_with_group_of(g, x, make_group):
    # Built from a call's result, which nothing says is tensor data: that the runner derives data
    # from the inputs is an assumption, so the finding is a warning that names it.
    runner = AllGatherRunner(make_group(), 8, 64)  # want: CG202~ "cannot tell from a size"
    with torch.cuda.graph(g):
        out = runner(x)
    return out


class Operand:
    """A record of a quantized operand: it keeps its tensors as they are."""

    def __init__(self, data, scales, fmt):
        self.data = data
        self.scales = scales
        self.fmt = fmt


def gemm(op, w, out):
    out.copy_((op.data.float() * op.scales.float()) @ w)


def capture_with_views(g, n, w, out, batches):
    # An operand over views of the static inputs aliases them: refilling them in place before each
    # replay refreshes it. One over a converted copy (`q.float()`) keeps the copy made at capture.
    q = torch.zeros(n, 64, dtype=torch.uint8, device="cuda")
    scales = torch.zeros(n, 64, dtype=torch.uint8, device="cuda")
    op = Operand(q.view(torch.int8), scales[:n], "mx")
    stale = Operand(q.float(), scales, "mx")  # want: CG202
    with torch.cuda.graph(g):
        gemm(op, w, out)
        gemm(stale, w, out)
    for b in batches:
        q.copy_(b.q)
        scales.copy_(b.scales)
        g.replay()
    return out


class CumLens:
    """Computes the cumulative lengths with a torch function, not a tensor method: derived all the
    same."""

    def __init__(self, lens):
        self.lens = lens
        self.starts = torch.cumsum(lens, 0)


class HeldLens:
    """Keeps the lengths, then computes from them through the attribute it stored them in, into a
    buffer of its own (`out=`)."""

    def __init__(self, lens):
        self.lens = lens
        cu = torch.zeros(lens.shape[0] + 1, dtype=torch.int32, device=lens.device)
        torch.cumsum(self.lens, 0, out=cu[1:])
        self.cu = cu


class PaddedLens:
    """Allocates a buffer shaped like its input and keeps the input as it is: no derivation."""

    def __init__(self, lens):
        self.lens = lens
        self.pad = torch.zeros_like(lens)


def attend(x, lens):
    return x * lens.lens[:1]


def capture_with_torch_functions(g, x, lens, out):
    cum = CumLens(lens)  # want: CG202
    held = HeldLens(lens)  # want: CG202
    padded = PaddedLens(lens)
    with torch.cuda.graph(g):
        out.copy_(attend(x, cum) + attend(x, held) + attend(x, padded))
    return out
