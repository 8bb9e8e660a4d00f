"""The order the suite's files are handed to the xdist workers in (tests/conftest.py): `--dist
loadfile` gives files out in collection order, so a long file given out late runs alone at the
end while the other workers idle. The longest files go first, longest first; then the other
files with a test marked slow; then the rest by their number of tests, most first. A file's
tests keep their order. Every worker computes the same order (the collection is the same)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

# Seconds each file's tests took in a run of four workers, longest first.
SLOW_FIRST: tuple[str, ...] = (
    "tests/test_bench_monday.py",  # 137 (one test)
    "tests/timebot/test_workers_postgresql.py",  # 89 (one test): `serve --workers 2`
    "tests/timebot/test_workers.py",  # 80: the same on SQLite
    "tests/test_http_sweep.py",  # 77
    "tests/service/graphql/test_schema_sweep_0.py",  # 71 each: the GraphQL sweep's groups
    "tests/service/graphql/test_schema_sweep_1.py",  # (one file of ~210 s before)
    "tests/service/graphql/test_schema_sweep_2.py",
    "tests/test_wheel_ide.py",  # 68: the wheel build
    "tests/deploy/test_container_image.py",  # 53: the image build
    "tests/timebot/test_signin_browser.py",  # 39: Chromium
)


class Collected(Protocol):
    @property
    def nodeid(self) -> str: ...

    @property
    def path(self) -> Path: ...

    def get_closest_marker(self, name: str) -> object | None: ...


T = TypeVar("T", bound=Collected)


def file_of(item: Collected) -> str:
    """The item's file as the root directory names it (`tests/…/test_x.py`)."""
    return item.nodeid.split("::", 1)[0]


def ordered(items: Sequence[T]) -> list[T]:
    rank = {name: index for index, name in enumerate(SLOW_FIRST)}
    slow: set[Path] = set()
    count: dict[Path, int] = {}
    for item in items:
        count[item.path] = count.get(item.path, 0) + 1
        if item.get_closest_marker("slow") is not None:
            slow.add(item.path)
    first = {path: index for index, path in enumerate(dict.fromkeys(i.path for i in items))}
    return sorted(items, key=lambda item: (rank.get(file_of(item), len(rank)),
                                           item.path not in slow, -count[item.path],
                                           first[item.path]))
