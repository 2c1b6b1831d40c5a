from abc import ABC, abstractmethod


class RopeImpl(ABC):
    """The backend-neutral interface: no torch module."""

    @abstractmethod
    def forward(self, x, positions):
        raise NotImplementedError
