"""Model classes written on a framework's model base class, which is a torch module:
transformers' PreTrainedModel and diffusers' ModelMixin (their presets name them). Calling an
instance runs its forward, as for a class written on nn.Module."""
import torch
from diffusers.models.modeling_utils import ModelMixin
from transformers.modeling_utils import PreTrainedModel


class TinyPreTrained(PreTrainedModel):
    pass


class TinyCausalLM(TinyPreTrained):
    def __init__(self, config):  # context: eager
        super().__init__(config)
        self.limit = 8

    def forward(self, ids):  # context: captured
        if ids.max().item() > self.limit:  # want: CG101
            ids = ids.clamp(max=self.limit)
        return ids * 2


class TinyDiT(ModelMixin):
    def forward(self, latents):  # context: captured
        return latents / latents.norm().item()  # want: CG101


class Offline:
    """No model base: calling an instance runs nothing (it has no __call__)."""

    def forward(self, x):  # context: eager
        return x.sum().item()
