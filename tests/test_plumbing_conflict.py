"""plumbing.db.once_more_on_conflict: a unit of work that inserts a missing row, raced by
another that inserted it first, runs again and updates the row (nothing lost, no error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, insert, select
from sqlalchemy.exc import IntegrityError

from plumbing.db import create_engine, once_more_on_conflict, session_factory, unit_of_work

metadata = MetaData()
rows = Table("rows", metadata, Column("key", String, primary_key=True), Column("value", Integer))


async def test_the_loser_of_a_racing_insert_updates_the_row(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'race.db'}")
    async with engine.begin() as connection:
        await connection.run_sync(metadata.create_all)
    sessions = session_factory(engine)
    runs = 0

    async def store() -> None:
        nonlocal runs
        runs += 1
        async with sessions() as reading:
            found = await reading.scalar(select(rows.c.value).where(rows.c.key == "a"))
        if runs == 1:  # the rival's insert lands between our read and our insert
            async with unit_of_work(sessions) as rival:
                await rival.execute(insert(rows).values(key="a", value=1))
        async with unit_of_work(sessions) as session:
            if found is None:
                await session.execute(insert(rows).values(key="a", value=2))
            else:
                await session.execute(rows.update().where(rows.c.key == "a").values(value=2))

    try:
        await once_more_on_conflict(store)
        async with sessions() as session:
            assert (await session.execute(select(rows))).all() == [("a", 2)]
        assert runs == 2

        async def always_conflicting() -> None:
            raise IntegrityError("insert", {}, Exception("duplicate key"))

        with pytest.raises(IntegrityError):  # a conflict that persists is not hidden
            await once_more_on_conflict(always_conflicting)
    finally:
        await engine.dispose()
