"""An offline conversion the package ships as a script: its module-level code parses the command
line and runs the conversion, so importing it would parse the importer's arguments; it is the
package's program, and what only it runs is no API a caller captures. A module that parses a
command line inside a function (`convert_api.cli_args`) is no script: its API stays roots."""
import argparse

import torch

from .ops import _launch


def calibrate(x, rows):  # context: eager
    scales = []
    for r in range(rows):
        scales.append(_launch(x[r], x[r].abs().max().item()))
    return torch.stack(scales)


def measure(x):  # context: eager
    return _launch(x, x.std().item())


parser = argparse.ArgumentParser(description="convert a checkpoint")
parser.add_argument("--rows", type=int, default=8)
args = parser.parse_args()

data = torch.randn(args.rows, 64, device="cuda")
calibrate(data, args.rows)
measure(data)
