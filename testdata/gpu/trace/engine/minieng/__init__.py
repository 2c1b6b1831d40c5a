"""minieng: a small decode engine built the way serving engines are (a model
registry, decoder layers from a factory in an nn.ModuleList, an attention
backend chosen at run time, a CUDA-graph runner handed the decode function,
replay-prep that refreshes attention metadata), for capguard trace's GPU test.
Random weights; nothing is downloaded."""
