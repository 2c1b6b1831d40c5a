"""A script beside the package: a caller of its API."""
import torch

from trainkit.ops import row_stats


def main():  # context: eager
    print(row_stats(torch.randn(1 << 20, device="cuda")).sum())


if __name__ == "__main__":
    main()
