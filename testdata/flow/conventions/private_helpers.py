"""A private method is the class's own business, not a step of a graph protocol a framework drives:
a model whose constructor calls its own `_expose_decoder_for_cuda_graph_helper` (it sets the
fields an outside graph helper reads), or whose dispatcher builds its graph in `_create_cuda_graph`,
is not captured by convention, so its forward stays eager. A public protocol method beside a private
one still makes the class follow the protocol."""
import torch


class VisionLanguageModel(torch.nn.Module):
    def __init__(self, decoder):
        super().__init__()
        self.decoder = decoder
        self._expose_decoder_for_cuda_graph_helper()

    def _expose_decoder_for_cuda_graph_helper(self):
        self.layers = self.decoder

    def forward(self, ids):  # context: eager
        return ids[: ids.sum().item()]


class ProfiledEngine:
    def _create_cuda_graph(self, x):
        self.static = x

    def forward(self, x):  # context: eager
        torch.cuda.synchronize()
        return x


class PublicHook:
    def _setup_cuda_graph_state(self):
        self.ready = True

    def init_forward_metadata_replay_cuda_graph(self, bs):
        self.bs = bs

    def forward_decode(self, q):  # context: captured
        return q * q.max().item()  # want: CG101~
