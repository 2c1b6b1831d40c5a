"""Function values the graph runner calls. Each planted sync is reached only through a function
value: a parameter, a return value, an attribute, a dict, a list, a tuple, functools.partial."""


def decode_fused(x):  # context: captured
    if x.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan")
    return x


def decode_plain(x):  # context: captured
    if x.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan")
    return x


def greedy(logits):  # context: captured
    return logits.argmax(-1, keepdim=True).float() + logits.max().item()  # want: CG101


def top_p(logits):  # context: captured
    return logits.softmax(-1) * logits.sum().item()  # want: CG101


def clamp_logits(x):  # context: captured
    return x.clamp(-30.0, 30.0) + x.min().item()  # want: CG101


def penalize(x):  # context: captured
    return x - x.mean().item()  # want: CG101


def scaled_step(x, scale):  # context: captured
    return x * scale + x.max().item()  # want: CG101


def dump_logits(x):  # context: eager
    print(x.cpu())


def log_step(x):  # context: eager
    print(x.max().item())


def profile_step(x, tag):  # context: eager
    print(tag, x.sum().item())
