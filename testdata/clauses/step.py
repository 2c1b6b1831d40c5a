"""Capture regions and state under else, elif, except and finally clauses."""
import torch


class Runner:
    def __init__(self, fast):
        if fast:
            self.graph = None
        else:
            self.meta = Metadata()

    def capture(self, g, x, lens):
        try:
            y = x + 1
        except RuntimeError:
            with torch.cuda.graph(g):
                n = lens.max().item()  # want: CG101
        finally:
            pass
        if x is None:
            pass
        elif lens is None:
            with torch.cuda.graph(g):
                m = x.sum().item()  # want: CG101
        else:
            for _ in range(2):
                with torch.cuda.graph(g):
                    k = x.min().item()  # want: CG101
        return y


class Metadata:
    pass
