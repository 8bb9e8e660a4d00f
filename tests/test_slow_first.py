"""The order of the suite's files (tests/slow_first.py): the longest named files first, in
their order, then the files with a test marked slow, then the others by their number of
tests; a file's tests keep their order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.slow_first import SLOW_FIRST, ordered

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Item:
    nodeid: str
    slow: bool = False

    @property
    def path(self) -> Path:
        return ROOT / self.nodeid.split("::", 1)[0]

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "slow" and self.slow else None


def test_the_named_files_are_the_suites_each_once() -> None:
    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)
    missing = [name for name in SLOW_FIRST if not (ROOT / name).is_file()]
    assert not missing, missing


def test_the_named_files_first_then_the_slow_then_by_number_of_tests() -> None:
    items = [Item("tests/a.py::one"), Item("tests/b.py::one"), Item("tests/b.py::two"),
             Item("tests/c.py::one", slow=True), Item(f"{SLOW_FIRST[1]}::two"),
             Item(f"{SLOW_FIRST[1]}::one"), Item("tests/d.py::one", slow=True),
             Item("tests/d.py::two", slow=True), Item(f"{SLOW_FIRST[0]}::one")]
    assert [item.nodeid for item in ordered(items)] == [
        f"{SLOW_FIRST[0]}::one", f"{SLOW_FIRST[1]}::two", f"{SLOW_FIRST[1]}::one",
        "tests/d.py::one", "tests/d.py::two", "tests/c.py::one",
        "tests/b.py::one", "tests/b.py::two", "tests/a.py::one"]
    # Whatever order they were collected in, the named files come in theirs.
    assert [item.nodeid for item in ordered(list(reversed(items)))][:3] == [
        f"{SLOW_FIRST[0]}::one", f"{SLOW_FIRST[1]}::one", f"{SLOW_FIRST[1]}::two"]
