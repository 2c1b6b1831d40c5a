"""The package's command-line program (its folder has no __init__.py: a namespace package inside
the package)."""
import torch

from trainkit.trainer import Trainer


def main():  # context: eager
    Trainer(steps=10).fit([torch.randn(64, device="cuda") for _ in range(10)])


if __name__ == "__main__":
    main()
