"""The backend registry: the class comes from a module imported by name at run time, so no value
flows to the caller; the string return annotation names the type."""
import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import AttnBackend


def get_backend(name: str) -> "AttnBackend":  # context: eager
    module = importlib.import_module(f"backends.{name}")
    return module.BACKEND_CLS(max_len=4096)
