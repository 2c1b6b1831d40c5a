"""A chain knows what its method's self is. The graph runner captures `self.run(...)`, an inherited
method whose `self.step(...)` has an override in each subclass: on this chain self is a graph
runner, so only the graph runner's `step` is captured, not the eager runner's (which reads the
host). `super().step(...)` continues on the same object. A method patched into a class from outside
its body (`Drafter.first_pass = PlatformDrafter.first_pass`) runs on every instance of that class."""
import torch


class Stepper:
    def run(self, x):  # context: captured
        return self.step(x)

    def step(self, x):  # context: captured
        return x + 1


class GraphRunner(Stepper):
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(4, device="cuda")
        self.out = None

    def capture(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.run(self.x)

    def step(self, x):  # context: captured
        return super().step(x) * 2


class EagerRunner(Stepper):
    def step(self, x):  # context: eager
        n = int(x.sum().item())
        return x[:n]


def serve(x):  # context: eager
    runner = GraphRunner()
    runner.capture()
    return EagerRunner().run(x)


class Drafter:
    def first_pass(self, x):  # context: captured
        return x


class PlatformDrafter(Drafter):
    def first_pass(self, x):  # context: captured
        return x * 3


# A platform patch made at import: every drafter's first pass is the platform's from here on.
Drafter.first_pass = PlatformDrafter.first_pass


class GraphDrafter(Drafter):
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(4, device="cuda")
        self.out = None

    def capture(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.first_pass(self.x)
