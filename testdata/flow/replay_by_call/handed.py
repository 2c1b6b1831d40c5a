"""A decode step makes a fresh state object, fills it, and hands it to the runner that replays:
the runner reads that object on the host and copies its tensors into the state its graph
captured (a graph cannot read an object made after the capture). So binding a new tensor to an
attribute of the step's object is how the step passes its input, not a rebinding the graph
misses, although the captured code reads an attribute of that name on an object of that class.
Where the runner takes no such object (it ignores the argument), the step's binding prepares
nothing the replay reads, and the rule's guess stands as a warning."""
import torch


class StepState:
    def __init__(self):  # context: replay-prep
        self.positions = torch.zeros(8, dtype=torch.long, device="cuda")
        self.lengths = torch.zeros(8, dtype=torch.int32, device="cuda")

    def fill(self, pos):  # context: replay-prep
        self.positions = pos.long()
        self.lengths = (pos + 1).int()

    def copy_from(self, other):  # context: replay-prep
        self.positions.copy_(other.positions)
        self.lengths.copy_(other.lengths)


class Runner:
    def __init__(self):  # context: eager
        self.graph = torch.cuda.CUDAGraph()
        self.static = StepState()
        self.out = None

    def capture(self):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.static.positions * self.static.lengths

    def replay(self, state):  # context: eager
        self.static.copy_from(state)
        self.graph.replay()
        return self.out

    def replay_ignoring(self, state):  # context: eager
        self.graph.replay()
        return self.out


class Model:
    def __init__(self):  # context: eager
        self.runner = Runner()
        self.kept = StepState()

    def decode(self, pos):  # context: eager
        state = StepState()
        state.fill(pos)
        state.lengths = torch.ones_like(pos, dtype=torch.int32)
        return self.runner.replay(state)

    def decode_stale(self, pos):  # context: eager
        self.kept.positions = pos.long()  # want: CG201~
        return self.runner.replay_ignoring(self.kept)


def serve(model, batches):  # context: eager
    model.runner.capture()
    for pos in batches:
        model.decode(pos)
        model.decode_stale(pos)
