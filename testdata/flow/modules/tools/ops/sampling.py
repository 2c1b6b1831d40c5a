"""A look-alike of engine.ops.sampling that nothing imports."""


def greedy(logits):  # context: eager
    if logits.isnan().any().item():
        raise FloatingPointError("nan logits")
    return logits.argmax(-1)
