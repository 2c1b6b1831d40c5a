"""A kernel library whose graph-mode setting only configures its autotuner: the field
`USE_CUDA_GRAPH` of its tuning settings is read only as `triton.autotune(use_cuda_graph=...)`,
which times the tuner's runs in a graph. That is no evidence that the library captures its own
code (as the keyword alone is not), so it stays in library mode."""


class TUNING:
    USE_CUDA_GRAPH = False
    WARMUP = 25


def set_tuning(**kwargs):  # context: eager
    if "use_cuda_graph" in kwargs:
        setattr(TUNING, "USE_CUDA_GRAPH", bool(kwargs["use_cuda_graph"]))
