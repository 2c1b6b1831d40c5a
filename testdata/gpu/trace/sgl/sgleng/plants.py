"""The hazard this run plants (set once by serve.py from --plant):

none     the correct engine
rebind   replay prep rebinds the backend's seq_lens to a new tensor instead of copying into it
stale    replay prep copies out_cache_loc[:bs] and leaves the padded tail from an earlier, larger batch
resize   replay prep grows the runner's positions buffer with resize_ (new storage)
stored   the captured forward stores its final hidden state in self.last_hidden, read after replays
baked    the capture reads the longest sequence from a CPU mirror and bakes it into the kernel
dynamic  the MoE layer counts tokens per expert with torch.bincount under capture
"""

PLANT = ["none"]


def on(name):
    return PLANT[0] == name
