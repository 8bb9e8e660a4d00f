"""Benchmarks: `python -m bench [name prefix]` (or `make bench BENCH=prefix`).

Each module of this package other than `common` and `__main__` declares `FIGURES` (the names
of the figures it measures) and `run(selected)` returning its `Figure`s; a module runs when
one of its figure names starts with the prefix. Results go to stdout, one line per figure:
`bench <name> <value> <unit> baseline <value> ratio <value>`; progress goes to stderr.
"""
