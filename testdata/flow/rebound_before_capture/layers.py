"""A layer that calls whatever dispatcher its attribute holds. Its constructor builds the
synchronizing one; the tests in capture.py bind another before they capture. The points-to solve
keeps every value the attribute ever held, so the synchronizing dispatcher is reached from each
capture: where the capturing function binds the attribute first, on every path to the capture,
that edge is a condition on the chain (a warning that says so); where the binding is in a branch
the capture is outside of, or nothing binds it, the edge stays proved."""
import torch
from torch import nn


class SyncDispatcher:
    def dispatch(self, x):  # context: captured
        if torch.any(x < 0):  # want: CG101
            raise ValueError("negative routing weight")
        return x


class StaticDispatcher:
    def dispatch(self, x):  # context: captured
        return x * 2


class DerivedStatic(StaticDispatcher):
    pass


class Router:
    def route(self, x):  # context: captured conditional
        return torch.nonzero(x)  # want: CG104?


class QuietRouter(Router):
    # Overrides the method: an instance of it never runs Router.route.
    def route(self, x):  # context: captured
        return x + 1


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = Router()

    def forward(self, x):  # context: captured
        return self.router.route(x)


class MoELayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.dispatcher = SyncDispatcher()
        self.scale = torch.ones(1, device="cuda")

    def forward(self, x):  # context: captured
        return self.dispatcher.dispatch(x) * self.scale


class Head:
    def __call__(self, x):  # context: captured conditional
        return x.nonzero()  # want: CG104?


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Head()

    def forward(self, x):  # context: captured
        return self.head(x)


def fast_head(x):  # context: captured
    return x + 1
