"""A helper that uses TensorRT-LLM (an import turns the trtllm preset on): the project uses the
framework here, it does not extend it."""
import tensorrt_llm


def export_engine(model, path):
    builder = tensorrt_llm.Builder()
    return builder.build(model, path)
