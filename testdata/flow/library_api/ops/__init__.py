"""A kernel package shipped beside a serving engine that captures its own decoder. The package's
API (what this __init__ re-exports) is for callers outside the project: a public launcher of
it that nothing in the project calls is a launcher root, whatever the engine captures. A
launcher the engine calls runs where the engine puts it; one the __init__ does not re-export
is the package's inside."""
from .norm import rms_norm
from .rope import apply_rope, rope_tables
from .setup import prepare_reference
