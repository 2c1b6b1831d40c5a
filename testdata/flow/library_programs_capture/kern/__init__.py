"""A kernel package with programs that use it: an evaluation program in the package (its `main`,
run under `if __name__ == "__main__":`) and a quick-start script beside it, both compiling a
model in a mode that captures CUDA graphs. A program uses the package as any caller does: its
capture is no evidence that the package's API runs only under the project's own captures, so
the package stays in library mode and its public launcher is checked for callers that capture
it."""
from .scale import scale_rows
