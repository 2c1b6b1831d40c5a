def scale(x):  # context: captured
    return x * x.abs().max().item()  # want: CG101


def offline_scale(x):  # context: eager
    return x * float(x.abs().mean())
