"""A test runs once: its runner calls it, and what it builds is its own. What it does before the
call that replays (building the model, loading its weights) comes before the first replay, not
between two; only a loop around that call runs its body again between replays. The same holds
for a helper that such a test calls at one site outside a loop, and for a worker nested in the
test that nothing in the project calls (a Ray task, a spawned process). A helper the test calls
twice may run after the first call's capture, and so may a test's code after a capture it runs
itself, or before the replay of a runner it is given (a fixture may have captured it)."""
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

    def swap(self, w: torch.Tensor):  # context: replay-prep
        self.w = w * 4  # want: CG201~

    def swap_after(self, w: torch.Tensor):  # context: replay-prep
        self.w = w * 5  # want: CG201~


class Runner:
    def __init__(self, model):  # context: eager
        self.model = model
        self.x = torch.zeros(8, device="cuda")
        self.graph = None
        self.out = None

    def body(self):  # context: captured
        return self.x * self.model.w

    def capture(self):  # context: eager
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = self.body()

    def step(self):  # context: eager
        if self.graph is None:
            self.capture()
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


def test_fixture_runner(runner: Runner):  # context: eager
    # The runner comes from a fixture, which may have captured its graph already: what the
    # test does before the replay may come after that capture.
    runner.model.swap(torch.ones(8, device="cuda"))
    runner.step()


def test_capture_then_swap():  # context: eager
    # The test captures first, then binds: that runs between the capture and the replay.
    model = Model(8)
    runner = Runner(model)
    runner.capture()
    model.swap_after(torch.ones(8, device="cuda"))
    runner.step()


def _generate(runner, steps):  # context: eager
    for _ in range(steps):
        runner.step()


def test_settings(steps=3):  # context: eager
    # A plain call that replays through the runner the test builds; the setting it is given
    # holds no object that could have been captured before.
    model = Model(8)
    model.load(torch.ones(8, device="cuda"))
    _generate(Runner(model), steps)
