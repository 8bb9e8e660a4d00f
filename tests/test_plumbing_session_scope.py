"""plumbing.db.session_scope: a session closed directly where closing does no I/O (SQLite on the
loop thread, or no transaction left), else by SQLAlchemy's own close, which a cancellation
cannot interrupt; either way its connection goes back to the pool and an error rolls back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from plumbing.db import create_engine, session_factory, session_scope
from tests.pg import create_pg_database, drop_pg_database, pg_url


@pytest.fixture(params=["sqlite", "postgresql"])
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    database = None
    if request.param == "sqlite":
        made = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'scope.db'}")
    else:
        database = await create_pg_database()
        made = create_engine(pg_url(database))
    async with made.begin() as connection:
        await connection.execute(text("CREATE TABLE items (n INTEGER)"))
    yield made
    await made.dispose()
    if database is not None:
        await drop_pg_database(database)


@pytest.fixture
def shielded_closes(monkeypatch: pytest.MonkeyPatch, engine: AsyncEngine) -> list[bool]:
    """One entry each time SQLAlchemy's own `async with` exit closes a session of `engine`
    (not of whatever else runs in the process meanwhile)."""
    closes: list[bool] = []
    original = AsyncSession.__aexit__

    async def counted(self: AsyncSession, *args: Any) -> None:
        if self.bind is engine:
            closes.append(True)
        await original(self, *args)

    monkeypatch.setattr(AsyncSession, "__aexit__", counted)
    return closes


async def _count(engine: AsyncEngine) -> int:
    async with engine.connect() as connection:
        return int((await connection.execute(text("SELECT count(*) FROM items"))).scalar_one())


async def test_a_read_session_gives_its_connection_back(engine: AsyncEngine,
                                                        shielded_closes: list[bool]) -> None:
    async with session_scope(session_factory(engine)) as session:
        assert await session.scalar(text("SELECT 1")) == 1
        assert session.in_transaction()
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    # SQLite's rollback does no I/O: closed directly; PostgreSQL's goes to the server.
    assert shielded_closes == ([] if engine.dialect.name == "sqlite" else [True])


async def test_a_committed_session_is_closed_directly(engine: AsyncEngine,
                                                      shielded_closes: list[bool]) -> None:
    async with session_scope(session_factory(engine)) as session:
        await session.execute(text("INSERT INTO items VALUES (1)"))
        await session.commit()
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert shielded_closes == []
    assert await _count(engine) == 1


async def test_an_error_rolls_back_and_gives_the_connection_back(
    engine: AsyncEngine, shielded_closes: list[bool]
) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        async with session_scope(session_factory(engine)) as session:
            await session.execute(text("INSERT INTO items VALUES (2)"))
            raise RuntimeError("boom")
    assert engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert shielded_closes == [True]
    assert await _count(engine) == 0
