"""Decode attention backend with separate capture-time and replay-time metadata paths."""
from dataclasses import dataclass

import torch
import triton
import triton.language as tl


@dataclass
class ForwardMetadata:
    page_table: torch.Tensor
    seq_lens: torch.Tensor


@triton.jit
def _decode_kernel(q_ptr, k_ptr, page_table_ptr, seq_lens_ptr, out_ptr, max_pages, D: tl.constexpr):
    b = tl.program_id(0)
    d = tl.arange(0, D)
    n = tl.load(seq_lens_ptr + b)
    page = tl.load(page_table_ptr + b * max_pages)
    k = tl.load(k_ptr + page * D + d)
    q = tl.load(q_ptr + b * D + d)
    tl.store(out_ptr + b, tl.sum(q * k) * n)


class TritonAttnBackend:
    def __init__(self, max_bs, max_pages, device):
        self.max_pages = max_pages
        self.req_to_page = torch.zeros((4096, max_pages), dtype=torch.int64, device=device)
        self.cuda_graph_page_table = torch.zeros((max_bs, max_pages), dtype=torch.int32, device=device)
        self.cuda_graph_seq_lens = torch.ones(max_bs, dtype=torch.int32, device=device)
        self.forward_metadata = None

    def init_forward_metadata_capture_cuda_graph(self, bs, req_pool_indices, seq_lens):
        self.forward_metadata = ForwardMetadata(
            page_table=self.cuda_graph_page_table[:bs],
            seq_lens=self.cuda_graph_seq_lens[:bs],
        )

    def init_forward_metadata_replay_cuda_graph(self, bs, req_pool_indices, seq_lens):
        metadata = self.forward_metadata
        metadata.page_table = self.req_to_page[req_pool_indices[:bs]].to(torch.int32)  # want: CG201
        self.cuda_graph_seq_lens[:bs].copy_(seq_lens[:bs])

    def forward_decode(self, q, k_cache, layer_id):
        bs = q.shape[0]
        out = torch.empty(bs, dtype=torch.float32, device=q.device)
        metadata = self.forward_metadata
        _decode_kernel[(bs,)](
            q.contiguous(),  # made and read inside the captured call: graph-owned, no CG301
            k_cache,
            metadata.page_table,
            metadata.seq_lens,
            out,
            self.max_pages,
            D=q.shape[-1],
        )
        return out
