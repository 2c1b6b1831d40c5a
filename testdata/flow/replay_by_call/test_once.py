"""A test runs once: its runner calls it, and what it builds is its own. What it does before the
call that replays (building the model, loading its weights) comes before the first replay, not
between two; only a loop around that call runs its body again between replays. The same holds
for a helper that such a test calls at one site outside a loop, and for a worker nested in the
test that nothing in the project calls (a Ray task, a spawned process). A helper the test calls
twice may run after the first call's capture."""
import torch


class Model:
    def __init__(self, width):  # context: eager
        self.w = torch.ones(width, device="cuda")

    def load(self, w: torch.Tensor):  # context: eager
        self.w = w * 2

    def refresh(self, w: torch.Tensor):  # context: replay-prep
        self.w = w * 2  # want: CG201~

    def reload(self, w: torch.Tensor):  # context: replay-prep
        self.w = w * 3  # want: CG201~


class Runner:
    def __init__(self, model):  # context: eager
        self.model = model
        self.x = torch.zeros(8, device="cuda")
        self.graph = None
        self.out = None

    def body(self):  # context: captured
        return self.x * self.model.w

    def step(self):  # context: eager
        if self.graph is None:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.out = self.body()
        self.graph.replay()
        return self.out


def test_step():  # context: eager
    model = Model(8)
    model.load(torch.ones(8, device="cuda"))
    Runner(model).step()


def _check(model):  # context: eager
    model.load(torch.ones(8, device="cuda"))
    Runner(model).step()


def test_helper():  # context: eager
    _check(Model(8))


def test_worker(start):  # context: eager
    def _inner():  # context: eager
        model = Model(8)
        model.load(torch.ones(8, device="cuda"))
        Runner(model).step()

    start(_inner)


class TestRunner:
    def test_method(self):  # context: eager
        model = Model(8)
        model.load(torch.ones(8, device="cuda"))
        Runner(model).step()


def test_loop():  # context: eager
    model = Model(8)
    runner = Runner(model)
    for _ in range(3):
        model.refresh(torch.ones(8, device="cuda"))
        runner.step()


def _prepare_and_step(model, runner):  # context: eager
    model.reload(torch.ones(8, device="cuda"))
    runner.step()


def test_twice():  # context: eager
    model = Model(8)
    runner = Runner(model)
    _prepare_and_step(model, runner)
    _prepare_and_step(model, runner)
