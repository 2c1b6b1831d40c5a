"""Graph-protocol conventions: an attention backend in the SGLang style defines
init_forward_metadata_capture_cuda_graph / init_forward_metadata_replay_cuda_graph, and nothing
in this project captures it (the serving framework's graph runner does). Its forward methods are
therefore captured, and its replay hooks (init_forward_metadata_replay_cuda_graph,
on_cuda_graph_replay) are replay-prep: rebinding a tensor the forward reads there is CG201.
Methods the forward does not call (set-up from __init__) stay eager."""
import torch


class PagedAttnBackend:
    def __init__(self, max_bs, max_pages):
        self.page_table = torch.zeros(max_bs, max_pages, dtype=torch.int32, device="cuda")
        self.seq_lens = torch.ones(max_bs, dtype=torch.int32, device="cuda")
        self.check_layout()

    def check_layout(self):  # context: eager
        if self.page_table.sum().item() != 0:
            raise RuntimeError("page table not empty")

    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):
        self.seq_lens[:bs].copy_(seq_lens)

    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens, page_table):  # context: replay-prep
        self.seq_lens[:bs].copy_(seq_lens)
        self.page_table = page_table.to(torch.int32)  # want: CG201~

    def on_cuda_graph_replay(self, bs, seq_lens):  # context: replay-prep
        self.seq_lens = seq_lens.to(torch.int32)  # want: CG201~

    def forward_decode(self, q, k_cache):  # context: captured
        if self.seq_lens.max().item() > k_cache.shape[1]:  # want: CG101~
            raise ValueError("sequence longer than the cache")
        return torch.einsum("bd,bpd->bp", q, k_cache[self.page_table[:, 0]])

    def forward(self, q, k_cache):  # context: captured
        return self.forward_decode(q, k_cache)
