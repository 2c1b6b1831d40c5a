"""A training schedule captured as one graph. It takes a model or a list of model chunks, and a
data iterator or a list of them; `isinstance` unwraps the lists. Elsewhere a dataset object is
passed where an iterator is expected (an offline evaluation path), so the parameter holds the
dataset too — but only lists reach the subscript under `isinstance(x, list)`, so the dataset's
`__getitem__` (host-side preprocessing with `.item()`) is not called under capture."""
import torch


class TokenDataset:
    def __init__(self, tokens):  # context: eager
        self.tokens = tokens

    def __getitem__(self, i):  # context: eager
        n = int(self.tokens[i].sum().item())
        return self.tokens[i][:n]


class Shards:
    """Reached through a closure whose name is bound again after the assert."""

    def __getitem__(self, i):  # context: captured
        return torch.zeros(1, device="cuda").nonzero()  # want: CG104


class Pages:
    """Reached by a read before the assert."""

    def __getitem__(self, i):  # context: captured
        return torch.ones(1, device="cuda").nonzero()  # want: CG104


class Block(torch.nn.Module):
    def forward(self, x):  # context: captured
        return x * 2


class Chunks:
    """A list-like holder of model chunks: subscripting it is a real call of its __getitem__."""

    def __init__(self, blocks):  # context: eager
        self.blocks = blocks
        self.active = torch.ones(len(blocks), device="cuda")

    def __getitem__(self, i):  # context: captured conditional
        if self.active[i].item() == 0:  # want: CG101?
            return self.blocks[0]
        return self.blocks[i]


def forward_backward(data_iterator, model):  # context: captured
    if isinstance(model, list):
        model = model[0]
    if isinstance(data_iterator, (list, tuple)):
        data_iterator = data_iterator[0]
    batch = next(data_iterator)
    return model(batch)


def forward_backward_interleaved(data_iterator, model):  # context: captured
    # An assert states the type every caller passes: after it, only lists are subscripted.
    assert isinstance(model, list), "interleaving expects model chunks"
    assert isinstance(data_iterator, list)
    outs = []

    def step(i):  # context: captured
        # A closure defined after the asserts sees them too.
        return model[i](next(data_iterator[i]))

    for i in range(len(model)):
        outs.append(step(i))
    return outs


def rebinding(data_iterator):  # context: captured
    assert isinstance(data_iterator, list)

    def head():  # context: captured
        return data_iterator[0]

    first = head()
    data_iterator = Shards()  # bound again after the assert: the closure may see this one
    return first, head()


def unchecked(data_iterator):  # context: captured
    # A return before the assert: the read before it runs in calls that never reach the assert.
    first = data_iterator[0]
    if first is None:
        return None
    assert isinstance(data_iterator, list)
    return first


def forward_backward_chunks(data_iterator, model):  # context: captured
    # The read comes before the assert, but the parameter is never bound again and nothing
    # returns before the assert: a call passing anything but a list fails it.
    first = data_iterator[0]
    assert isinstance(data_iterator, list), "one data iterator per model chunk"
    return model(next(first))


def pick(model):  # context: captured
    # A conditional expression narrows its first branch; a project class narrows to itself.
    first = model[0] if isinstance(model, Chunks) else model
    return first


def evaluate(dataset):  # context: eager
    # Wrong on purpose in the style of a rarely-used path: a dataset where an iterator is expected.
    forward_backward_interleaved(dataset, [Block()])
    unchecked(Pages())
    forward_backward_chunks(dataset, Block())
    return forward_backward(dataset, Block())


def train_step(static_batch, chunks, data):
    graph = torch.cuda.CUDAGraph()
    model = [Block()]
    with torch.cuda.graph(graph):
        out = forward_backward([iter([static_batch])], model)
        forward_backward_interleaved([iter([static_batch])], model)
        unchecked([static_batch])
        forward_backward_chunks([iter([static_batch])], Block())
        rebinding([static_batch])
        pick(chunks)
        pick(data)
    return graph, out


batch = torch.zeros(4, 4, device="cuda")
evaluate(TokenDataset(batch))
train_step(batch, Chunks([Block()]), TokenDataset(batch))
