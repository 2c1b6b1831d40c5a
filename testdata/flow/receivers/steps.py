"""A chain knows what its method's self is. The graph runner captures `self.run(...)`, an inherited
method whose `self.step(...)` has an override in each subclass: on this chain self is a graph
runner, so only the graph runner's `step` is captured, not the eager runner's (which reads the
host). `super().step(...)` continues on the same object. A method patched into a class from outside
its body (`Drafter.first_pass = PlatformDrafter.first_pass`) runs on every instance of that class.
A recursive call on other objects (`c.handle(x)` for each required check) runs the method again on
those, whatever this chain's self is."""
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


class Check:
    def __init__(self):
        self.required = []

    def handle(self, x):  # context: captured
        for c in self.required:
            c.handle(x)
        return self.check(x)

    def check(self, x):  # context: captured
        return x


class NanCheck(Check):
    def check(self, x):  # context: captured
        if x.isnan().any().item():  # want: CG101
            raise FloatingPointError("nan")
        return x


class GraphCheck(Check):
    def __init__(self):
        super().__init__()
        self.required.append(NanCheck())
        self.graph = torch.cuda.CUDAGraph()
        self.x = torch.zeros(4, device="cuda")

    def capture(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.handle(self.x)
