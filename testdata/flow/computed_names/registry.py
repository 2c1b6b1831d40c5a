"""A module that holds ops stored under computed names (table.py)."""
