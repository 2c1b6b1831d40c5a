"""Code a capture region runs without a call expression: a subscript runs `__getitem__`, a `with`
item `__enter__` and `__exit__`, a `for` loop `__iter__`, an attribute read a property's getter.
Each runs in the region as much as a call there does (inside a captured function these edges were
followed already; in the region's own statements they were not roots). Replay prep is the same:
a property read before `.replay()` runs before it."""
import torch


class Pages:
    def __init__(self, lens):  # context: eager
        self.lens = lens

    def __getitem__(self, i):  # context: captured
        return self.lens[: int(self.lens[i])]  # want: CG102~

    def __enter__(self):  # context: captured
        return self.lens.sum().item()  # want: CG101

    def __exit__(self, *exc):  # context: captured
        return False

    def __iter__(self):  # context: captured
        return iter(self.lens.tolist())  # want: CG101

    @property
    def longest(self):  # context: captured
        return self.lens.max().item()  # want: CG101


class Batch:
    def __init__(self, reqs):  # context: replay-prep
        # built in the argument of the call that replays, after the capture: it runs before
        # the replay as a statement before that call would
        self.reqs = reqs

    @property
    def size(self):  # context: replay-prep
        return len(self.reqs)


class Runner:
    def __init__(self, lens):  # context: eager
        self.pages = Pages(lens)
        self.graph = torch.cuda.CUDAGraph()
        self.out = None

    def capture(self, x):  # context: eager
        with torch.cuda.graph(self.graph):
            y = x[self.pages[0]]
            with self.pages as n:
                y = y + n
            for v in self.pages:
                y = y + v
            self.out = y + self.pages.longest

    def replay(self, batch):  # context: eager
        bs = batch.size
        self.graph.replay()
        return self.out[:bs]


def serve(lens, x, reqs):  # context: eager
    r = Runner(lens)
    r.capture(x)
    return r.replay(Batch(reqs))
