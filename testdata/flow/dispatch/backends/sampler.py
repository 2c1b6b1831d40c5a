class Sampler:
    def pick(self, logits):  # context: captured resolution: annotated
        if logits.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan logits")
        return logits.argmax(-1)


class GreedySampler(Sampler):
    def pick(self, logits):  # context: captured resolution: hierarchy
        if logits.isinf().any().item():  # want: CG101~
            raise FloatingPointError("inf logits")
        return logits.argmax(-1)
