from dataclasses import dataclass


@dataclass
class EngineConfig:
    enforce_eager: bool = False


def start(runtime, model, cfg: EngineConfig):  # context: eager
    return runtime.launch(model, use_cuda_graph=not cfg.enforce_eager)
