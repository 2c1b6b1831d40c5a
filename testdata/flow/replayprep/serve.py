"""The replay-prep region: in a function that captures and then replays, only the code between
the end of the capture and the .replay() prepares replays, with what it calls. The set-up before
the capture and the capture block are not replay-prep: binding fresh tensors to the decode state
there is how its buffers are made (no CG201), and the captured step is captured only."""
import torch


class DecodeState:
    pass


def make_state(max_bs):  # context: eager
    state = DecodeState()
    state.positions = torch.zeros(max_bs, dtype=torch.int64, device="cuda")
    state.seq_lens = torch.ones(max_bs, dtype=torch.int32, device="cuda")
    return state


def step(state):  # context: captured
    return state.positions + state.seq_lens + state.idx


def refresh(state, batch):  # context: replay-prep
    state.positions.copy_(batch.positions)
    state.seq_lens = batch.seq_lens.to(torch.int32)  # want: CG201~[unsafe] "binds a new tensor"


def serve(batches, max_bs):
    state = make_state(max_bs)
    state.idx = torch.zeros(max_bs, dtype=torch.int32, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = step(state)
    for batch in batches:
        refresh(state, batch)
        state.idx = batch.idx.to(torch.int32)  # want: CG201~[unsafe]
        g.replay()
        yield out
