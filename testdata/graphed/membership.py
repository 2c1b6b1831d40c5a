"""A membership test with a device tensor in captured code: a list's or tuple's `in` compares each
element with `==` until one is the very object, and reads each answer's truth on the host (a sync
a capture forbids); a tensor's `in` reads `(t == x).any()`; a set's hashes by identity and reads
nothing (bench/probes/member_list.py, bench/results/2026-12-07-h-member-list.txt)."""
import torch


class StopCheck:
    def __init__(self):
        self.graph = torch.cuda.CUDAGraph()
        self.tok = torch.zeros(1, dtype=torch.long, device="cuda")
        self.other = torch.zeros(1, dtype=torch.long, device="cuda")
        self.flags = torch.zeros(1, device="cuda")
        self.out = None

    def step(self, tok, other, mode):
        done = torch.zeros(1, device="cuda")
        if tok in [2, 7]:  # want: CG101
            done.add_(1)
        stops = [2, 7]
        if tok not in stops:  # want: CG101 "compares the device tensor `tok`"
            done.add_(2)
        hit = 7 in tok  # want: CG101 "tests membership in the device tensor `tok`"
        late = tok in [other, tok]  # want: CG101~
        first = tok in [tok, other]
        hashed = tok in {other, tok}
        back = 3 in [other, 5]  # want: CG101
        host = torch.zeros(1, dtype=torch.long)
        on_host = host in [2, 7]
        named = mode in ("greedy", "top_k")
        # A device backend's module makes no tensors, nor does a
        # quantization workflow's: a string's split and a bool.
        gpu = torch.xpu.get_device_name().replace(" ", "_")
        tagged = "H200" in gpu.split("_")
        if torch.ao.quantization.qconfig.qconfig_equals(mode, mode):
            done.add_(4)
        return done, hit, late, first, hashed, back, on_host, named, tagged

    def capture(self):
        with torch.cuda.graph(self.graph):
            self.out = self.step(self.tok, self.other, "greedy")


def eager_stop(tok):
    # Not captured: a sync here is only slow.
    return tok in [2, 7]


def run():
    s = StopCheck()
    s.capture()
    return eager_stop(torch.zeros(1, device="cuda"))
