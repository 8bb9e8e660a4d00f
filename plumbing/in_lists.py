"""Values for `column IN (…)` in lists of a bounded length: a read that covers any number of
ids in a bounded number of statements per IN_LIST_SIZE, each list far below SQLite's and
PostgreSQL's limits on parameters."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

IN_LIST_SIZE = 500


def in_lists(values: Iterable[str], size: int = IN_LIST_SIZE) -> Iterator[list[str]]:
    """The distinct values, sorted, `size` at a time."""
    ordered = sorted(set(values))
    for start in range(0, len(ordered), size):
        yield ordered[start:start + size]
