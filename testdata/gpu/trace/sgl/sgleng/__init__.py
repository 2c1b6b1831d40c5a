"""An engine in SGLang's style, written for capguard's trace tests: a graph
runner that captures several padded batch sizes into one shared memory
pool, an attention backend with capture and replay metadata methods and a
Triton decode kernel, a mixture-of-experts layer, random weights. Each
variant plants one hazard (sgleng.plants.PLANT)."""
