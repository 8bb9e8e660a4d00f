"""bench.scale at a tiny size, so the bench cannot rot: the seed (and its cache) and every
figure taken from a real `timebot serve` at 10 people, on SQLite (and PostgreSQL with
BENCH_SCALE_TEST_PG=1) (the figure lines themselves are `Figure`s of two such measurements).
No timing is asserted: only that the figures come out, and that each reminder mail went out
once per person (bench.scale raises otherwise)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from bench import scale, scale_seed

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow


# SQLite only in the suite (each database costs a serve start and a seed); the PostgreSQL path
# of the same code runs with BENCH_SCALE_TEST_PG=1.
@pytest.mark.parametrize("database", ["sqlite"] + (["postgresql"] if os.environ.get(
    "BENCH_SCALE_TEST_PG") else []))
def test_scale_figures_at_tiny_size(database: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("BENCH_MAIL_DATABASE", database)
    monkeypatch.setattr(scale, "ROUNDS", 3)
    try:
        values = asyncio.run(scale.measure(10, runs=1))
        assert sorted(values) == sorted(scale.NAMES)
        assert all(value > 0 for value in values.values())
        # The second use of a size is the cached seed: the same organisation, a fresh copy.
        org, url = asyncio.run(scale_seed.seeded(10, database, tmp_path))
        assert (len(org.employees), len(org.team)) == (9, 9)
        asyncio.run(scale_seed.drop(url))
    finally:
        if database == "postgresql":
            for people in (10,):
                name = scale_seed.template_name(people)
                asyncio.run(scale_seed._pg(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
