import torch

from decode import dense_decode, paged_decode


class StepState:
    def __init__(self):
        self.lens = None
        self.table = None


class DecodeGraph:
    def __init__(self, cache, max_bs, width):  # context: eager
        self.cache = cache
        self.state = StepState()
        self.state.lens = torch.ones(max_bs, dtype=torch.int32, device="cuda")
        self.state.table = torch.zeros((max_bs, width), dtype=torch.int32, device="cuda")
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, q):
        st = self.state
        with torch.cuda.graph(self.graph):
            self.paged = paged_decode(q, self.cache, st.lens, table=st.table)
            self.dense = dense_decode(q, self.cache, st.lens)
