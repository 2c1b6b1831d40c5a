"""Library mode is scoped to the library: its tests, benchmarks, examples and conftest.py are
callers, not the library. Their public functions that launch kernels are never launcher roots,
and a capture in a test (test_graph.py captures fused_add) does not make the library an engine:
apply_rope stays a launcher, reported as a warning that says what it assumed."""
