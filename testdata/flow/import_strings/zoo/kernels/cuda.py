def scale(x):  # context: captured resolution: name
    return x * x.norm().item()  # want: CG101~
