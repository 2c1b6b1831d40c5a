"""Pipeline stages. Every stage overrides run_stage; the base's is never called. Each planted
sync is reached only through a container (see pipeline.py)."""


class Stage:
    def __init__(self, dim):
        self.dim = dim

    def run_stage(self, x):  # context: eager
        if x.isnan().any().item():
            raise FloatingPointError("nan")
        return x


class AttnStage(Stage):  # list literal, indexing
    def run_stage(self, x):  # context: captured
        if x.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan")
        return x.softmax(-1)


class EmbedStage(Stage):  # append
    def run_stage(self, x):  # context: captured
        return x + x.max().item()  # want: CG101


class MlpStage(Stage):  # extend
    def run_stage(self, x):  # context: captured
        return x * x.mean().item()  # want: CG101


class NormStage(Stage):  # tuple unpacking
    def run_stage(self, x):  # context: captured
        return x / x.norm().item()  # want: CG101


class LmHead(Stage):  # dict literal, .items()
    def run_stage(self, x):  # context: captured
        return x - x.min().item()  # want: CG101


class MtpHead(Stage):  # dict item assignment, .values()
    def run_stage(self, x):  # context: captured
        return x - x.sum().item()  # want: CG101


class ProbeStage(Stage):  # only in the probes list, which only eager code reads
    def run_stage(self, x):  # context: eager
        print(x.cpu())
        return x


def softcap(x):  # context: captured
    return x.tanh() * x.abs().max().item()  # want: CG101


def clamp(x):  # context: captured
    return x.clamp(-30.0, 30.0) + x.min().item()  # want: CG101


def trace_stats(x):  # context: eager
    print(x.tolist())
