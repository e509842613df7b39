"""CLI sub-commands (one module each; see ragbench/cli.py)."""
