import argparse

import torch

from .ops import _launch


def measured(x):  # context: launcher
    return _launch(x, x.mean().item())  # want: CG101~


def cli_args(argv):  # context: eager
    # a command-line parser inside a function: the module is no script
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int)
    return parser.parse_args(argv)
