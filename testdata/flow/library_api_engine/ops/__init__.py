"""Negative of library_api: an engine whose capture the analysis cannot see (its graph-mode
setting hands the model to a runtime that captures in C++) does not know what it captures, so
its package's re-exported launchers are no launcher roots: the runtime may capture them."""
from .rope import apply_rope
