"""Trainer of the embedded default model: run its tools as modules from the repository root,
e.g. `/usr/bin/python3 -m tools.train.train ...` (see models/README.md)."""
