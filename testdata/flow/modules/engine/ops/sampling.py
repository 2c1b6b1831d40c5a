def greedy(logits):  # context: captured
    if logits.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan logits")
    return logits.argmax(-1)
