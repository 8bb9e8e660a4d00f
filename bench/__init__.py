"""Benchmarks: `python -m bench [name prefix]` (or `make bench BENCH=prefix`).

Each benchmark module of this package declares `FIGURES` (the names of the figures it
measures) and `run(selected)` returning its `Figure`s; a module runs when one of its figure
names starts with the prefix. The modules without `FIGURES` are what they share. Results go
to stdout, one line per figure: `bench <name> <value> <unit> baseline <value> ratio <value>`;
progress goes to stderr. BENCH_BUSY=N takes every figure on a busy machine (bench.busy;
stderr says which).
"""
