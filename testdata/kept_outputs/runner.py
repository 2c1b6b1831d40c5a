"""A hand-made graph runner that returns its static output, and a draft loop around it."""
import torch


class DraftRunner:
    def __init__(self, model, x):
        self.static_x = x.clone()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.static_logits = model(self.static_x)

    def forward(self, x):
        self.static_x.copy_(x)
        self.graph.replay()
        return self.static_logits[: x.shape[0]]

    def forward_owned(self, x):
        self.static_x.copy_(x)
        self.graph.replay()
        return self.static_logits[: x.shape[0]].clone()


@torch.inference_mode()
def draft(runner, x, k):
    steps = []
    for _ in range(k):
        logits = runner.forward(x)  # want: CG205~ "silently"
        steps.append(logits)
        x = logits.softmax(-1)
    return torch.stack(steps)


@torch.inference_mode()
def draft_tokens(runner, x, k):
    toks = []
    for _ in range(k):
        logits = runner.forward(x)
        toks.append(logits.argmax(-1))
        x = logits.softmax(-1)
    return torch.stack(toks)


@torch.inference_mode()
def draft_owned(runner, x, k):
    steps = []
    for _ in range(k):
        logits = runner.forward_owned(x)
        steps.append(logits)
        x = logits.softmax(-1)
    return torch.stack(steps)


def serve(model, x):
    r = DraftRunner(model, x)
    return draft(r, x, 4), draft_tokens(r, x, 4), draft_owned(r, x, 4)
