"""A graph test that builds a reference wrapper between the capture and the replay: the
reference's constructor binds its own new buffers (nothing captured them: the object did not
exist at capture), while the replay prep that rebinds the captured wrapper's buffer is CG201."""
import torch


class DecodeWrapper:
    def __init__(self, n):  # context: replay-prep
        self.workspace = torch.zeros(n, device="cuda")
        self.lens = torch.zeros(n, dtype=torch.int32, device="cuda")

    def plan(self, lens):  # context: replay-prep
        self.lens = lens.to(torch.int32)  # want: CG201~

    def run(self, q):  # context: captured replay-prep
        return q * self.workspace[: q.shape[0]] + self.lens[: q.shape[0]]


def test_graph_matches_reference(q, lens):
    wrapper = DecodeWrapper(q.shape[0])
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = wrapper.run(q)
    reference = DecodeWrapper(q.shape[0])
    expected = reference.run(q)
    wrapper.plan(lens)
    g.replay()
    torch.testing.assert_close(out, expected)
