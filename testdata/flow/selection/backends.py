"""Selection: an attention backend that declares it does not support CUDA graphs (a
boolean class attribute, or a method with a constant False return whose name says
graph support) is never selected for a captured step, so its methods are not
captured. A subclass that declares support again runs the inherited methods under
capture, and a declaration that is not a constant False selects nothing away."""
import torch


class AttentionBackend:
    supports_cuda_graph = True

    def forward(self, q, k):  # context: captured
        return q @ k.t()


class TorchSDPABackend(AttentionBackend):
    # Varlen SDPA sizes its output on the host: no graphs.
    supports_cuda_graph = False

    def forward(self, q, k):  # context: eager
        lens = (q.abs().sum(-1) > 0).sum().item()
        return q[:lens] @ k.t()


class RaggedBackend(AttentionBackend):
    def supports_cuda_graph_capture(self):
        return False

    def forward(self, q, k):  # context: eager
        return q.nonzero()


class PagedBackend(AttentionBackend):
    def forward(self, q, k):  # context: captured
        return q.sum().item()  # want: CG101


class FlexBackend(AttentionBackend):
    cuda_graph_supported = False

    def forward(self, q, k):  # context: captured
        # A subclass (FlexGraphBackend) supports graphs again and runs this
        # method under capture.
        return q.nonzero()  # want: CG104


class FlexGraphBackend(FlexBackend):
    cuda_graph_supported = True


class DynamicBackend(AttentionBackend):
    def supports_cuda_graph(self):
        # Not a constant: whether it is selected is not known.
        return torch.cuda.get_device_capability()[0] >= 9

    def forward(self, q, k):  # context: captured
        return q.nonzero()  # want: CG104


def make_backend(name) -> AttentionBackend:
    return {"sdpa": TorchSDPABackend, "ragged": RaggedBackend, "paged": PagedBackend,
            "flex": FlexBackend, "flex_graph": FlexGraphBackend, "dynamic": DynamicBackend}[name]()
