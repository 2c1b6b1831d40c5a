"""A regular package inside the engine namespace package: it re-exports. The star import binds
only mlp.__all__ (gated_mlp), so `act` here is activations.act and never mlp.act."""
from .activations import act
from .attention import Attention
from .mlp import *
