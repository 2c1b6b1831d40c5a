NETS_PATH = "zoo.nets"

# Each architecture's implementation, by its qualified class name.
NET_MAP = {
    "tiny": f"{NETS_PATH}.tiny.TinyNet",
    "wide": "zoo.nets.wide.WideNet",
}

# Names that are not project code: an outside class and a plain sentence.
FOREIGN = {"hf": "transformers.models.llama.LlamaModel", "doc": "see zoo.nets for the list."}
