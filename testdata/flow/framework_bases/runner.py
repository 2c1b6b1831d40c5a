import torch

from models import EagerAttention, FastGPT2, Offline, RoutedLlama, Settings, TinyCausalLM, TinyDiT, TinyUNet


class Runner:
    def __init__(self, config):
        self.lm = TinyCausalLM(config)
        self.dit = TinyDiT()
        self.offline = Offline()
        self.gpt = FastGPT2(config)
        self.router = RoutedLlama(config)
        self.attn = EagerAttention(config, 0)
        self.unet = TinyUNet()
        self.settings = Settings()
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, ids, latents):
        with torch.cuda.graph(self.graph):
            self.tokens = self.lm(ids)
            self.images = self.dit(latents)
            self.embeds = self.gpt(latents)
            self.routes = self.router(ids)
            self.hidden = self.attn(latents)
            self.samples = self.unet(latents)
            self.settings(ids)
            self.offline(ids)
