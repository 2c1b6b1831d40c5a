import torch

from models import Offline, TinyCausalLM, TinyDiT


class Runner:
    def __init__(self, config):
        self.lm = TinyCausalLM(config)
        self.dit = TinyDiT()
        self.offline = Offline()
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, ids, latents):
        with torch.cuda.graph(self.graph):
            self.tokens = self.lm(ids)
            self.images = self.dit(latents)
