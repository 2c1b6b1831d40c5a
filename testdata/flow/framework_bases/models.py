"""Model classes written on a framework's model base class, which is a torch module:
transformers' PreTrainedModel and diffusers' ModelMixin (their presets name them), and the
concrete model classes and layers whose docs say they are torch modules (`GPT2Model`,
`LlamaForCausalLM`, a modeling module's `LlamaAttention`, diffusers' `UNet2DConditionModel`).
Calling an instance runs its forward, as for a class written on nn.Module."""
import torch
from diffusers import UNet2DConditionModel
from diffusers.models.modeling_utils import ModelMixin
from transformers import GPT2Model, LlamaForCausalLM, PretrainedConfig
from transformers.modeling_utils import PreTrainedModel
from transformers.models.llama.modeling_llama import LlamaAttention


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


class FastGPT2(GPT2Model):
    def forward(self, inputs_embeds):  # context: captured
        return inputs_embeds[: inputs_embeds.sum().long()]  # want: CG101


class RoutedLlama(LlamaForCausalLM):
    def forward(self, ids):  # context: captured
        return ids.tolist()  # want: CG101


class EagerAttention(LlamaAttention):
    def forward(self, hidden):  # context: captured
        return hidden * hidden.max().item()  # want: CG101


class TinyUNet(UNet2DConditionModel):
    def forward(self, sample):  # context: captured
        return sample.cpu()  # want: CG101


class Settings(PretrainedConfig):
    """A configuration is no module: calling one runs nothing."""

    def forward(self, x):  # context: eager
        return x.sum().item()


class Offline:
    """No model base: calling an instance runs nothing (it has no __call__)."""

    def forward(self, x):  # context: eager
        return x.sum().item()
