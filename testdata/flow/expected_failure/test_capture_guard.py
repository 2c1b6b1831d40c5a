"""Tests of a kernel's capture guard: the kernel refuses to run under capture when it would
need a host read, and the tests capture it on purpose inside `pytest.raises`. Those captures
are expected to fail; the code they reach is not captured code. The last test captures the
other kernel for real."""
import pytest
import torch


def validate_offsets(offsets):  # context: eager
    # Reached only from captures the tests expect to fail.
    if torch.cuda.is_current_stream_capturing():
        raise RuntimeError("cannot validate offsets under capture")
    return int(offsets[-1].item())


def segment_sum(x, offsets):  # context: eager
    total = validate_offsets(offsets)
    return x[:total].sum()


def reduce_rows(x):  # context: captured
    if x.isnan().any().item():  # want: CG101
        raise FloatingPointError("nan rows")
    return x.sum(dim=-1)


def test_cold_capture_is_refused():  # context: eager
    x = torch.randn(16, device="cuda")
    offsets = torch.tensor([0, 8, 16], device="cuda")
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="under capture"), torch.cuda.graph(g):
        segment_sum(x, offsets)


def test_cold_capture_is_refused_parenthesized():  # context: eager
    x = torch.randn(16, device="cuda")
    offsets = torch.tensor([0, 8, 16], device="cuda")
    g = torch.cuda.CUDAGraph()
    with (
        pytest.raises(RuntimeError),
        torch.cuda.graph(g),
    ):
        segment_sum(x, offsets)


def test_nested_refusal():  # context: eager
    x = torch.randn(16, device="cuda")
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError):
        with torch.cuda.graph(g):
            validate_offsets(x)


def test_warm_capture_replays():  # context: eager
    x = torch.randn(16, device="cuda")
    offsets = torch.tensor([0, 8, 16], device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        rows = reduce_rows(x)
    g.replay()
    assert rows.shape == (16,) or offsets.numel() == 3
