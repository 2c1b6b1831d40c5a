"""An RNG-state tracker forked inside the captured step: it compares the CPU generator's state
before and after, and reads the CUDA generator's state, which torch hands back as a CPU tensor
too. Reading those on the host waits for no GPU work; reading the step's own tensor does."""
import torch


class RNGTracker:
    def fork(self, x):  # context: captured
        cpu_state = torch.get_rng_state()
        y = x * 2
        if not torch.all(cpu_state == torch.get_rng_state()).item():
            print("CPU RNG state changed inside the GPU RNG context")
        if torch.cuda.get_rng_state().sum().item() == 0:
            print("the CUDA generator was never seeded")
        if y.sum().item() == 0:  # want: CG101
            print("all zero")
        return y


class Step:
    def __init__(self):
        self.tracker = RNGTracker()
        self.graph = torch.cuda.CUDAGraph()

    def capture(self, x):  # context: eager
        with torch.cuda.graph(self.graph):
            self.out = self.tracker.fork(x)
