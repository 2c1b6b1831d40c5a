"""Stand-in tqdm (used only where the real one is missing)."""
