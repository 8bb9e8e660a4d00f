"""Reads remembered for the rest of a session's work until it writes.

A request's checks ask the same small questions several times (a time record's owner's tags:
for the access lists, for the settings that cascade through tags, …). `memo(session)` is a
dict that lives on the session and is emptied by any write through it — an ORM flush, or an
INSERT, UPDATE or DELETE statement executed by the session — and at commit and rollback, so a
remembered answer is never older than the session's last write.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import ORMExecuteState, Session, SessionTransaction, UOWTransaction

_KEY = "read_memo"


def memo(session: AsyncSession) -> dict[Any, Any]:
    found: dict[Any, Any] = session.sync_session.info.setdefault(_KEY, {})
    return found


def _forget(session: Session) -> None:
    session.info.pop(_KEY, None)


@event.listens_for(Session, "after_flush")
def _after_flush(session: Session, _flush: UOWTransaction) -> None:
    _forget(session)


@event.listens_for(Session, "do_orm_execute")
def _on_execute(state: ORMExecuteState) -> None:
    if state.is_insert or state.is_update or state.is_delete:
        _forget(state.session)


@event.listens_for(Session, "after_transaction_end")
def _after_transaction(session: Session, _transaction: SessionTransaction) -> None:
    _forget(session)
