"""A step compiled in a mode the code around the call binds (a parameter's default, a local, a
`**kwargs` dict display): CG205 reads the mode as the library check does, so the tokens kept from
each replay are reported; a mode read from a run-time setting stays unknown."""
import torch


def build_step(w, compile_mode="reduce-overhead"):
    def step(x):
        return torch.softmax(x @ w, dim=-1)

    return torch.compile(step, mode=compile_mode)


class Decoder:
    def __init__(self, w, settings):
        mode = "reduce-overhead"
        self.step = torch.compile(self.forward, mode=mode)
        opts = {"mode": "max-autotune", "dynamic": False}
        self.fast = torch.compile(self.forward, **opts)
        self.configured = torch.compile(self.forward, mode=settings.compile_mode)
        self.w = w

    def forward(self, x):
        return torch.softmax(x @ self.w, dim=-1)

    def generate(self, x, n):
        outs = []
        for _ in range(n):
            y = self.step(x)  # want: CG205~
            outs.append(y)
            x = y
        return torch.cat(outs)

    def generate_fast(self, x, n):
        outs = []
        for _ in range(n):
            y = self.fast(x)  # want: CG205~
            outs.append(y)
            x = y
        return torch.cat(outs)

    def generate_configured(self, x, n):
        outs = []
        for _ in range(n):
            y = self.configured(x)
            outs.append(y)
            x = y
        return torch.cat(outs)
