"""The durable queue of the bot's proactive Teams sends (`teams_outgoing`): a card to an
approver, a nudge, a card updated in place. Each send is a row first, under a dedupe key when
it must go once (whichever delivery of an event queued it); the worker
(bot.teams.sender_worker) makes the Bot Connector calls.

A row records the tenant and organisation it is for: the worker sends it only while that
tenant still serves that organisation. Updating a card that has not gone yet changes the
queued activity instead (it goes once, already current); else an update row is queued behind
it, with the connector's activity id read when it goes."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.prefixes import starts_with
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.dedupe_keys import present_keys
from timebot.state.lanes import priority_of
from timebot.state.queue import DONE, FAILED, QUEUED
from timebot.state.teams_models import TeamsOutgoing

SEND = "send"
UPDATE = "update"
WRITE_CHUNK = 200


def wall_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Recipient:
    """Where a proactive send goes: the personal conversation of a linked Teams user, in the
    tenant serving the organisation (bot.teams.tenants' LinkedUser has these)."""

    tenant_id: str
    organisation_id: str
    conversation_id: str
    service_url: str


@dataclass(frozen=True)
class Send:
    """One send of a fan-out (`TeamsOutbox.send_many`)."""

    to: Recipient
    activity: dict[str, Any]
    key: str | None
    ref: str | None = None
    context: dict[str, Any] | None = None


class TeamsOutbox:
    def __init__(self, sessions: async_sessionmaker[AsyncSession],
                 reads: async_sessionmaker[AsyncSession], clock: Clock,
                 wake: Any = None) -> None:
        self.sessions, self.reads, self.clock = sessions, reads, clock
        self.wake = wake or (lambda: None)  # the worker's, once it runs
        self._seq = itertools.count()

    def _next_seq(self) -> int:
        return time.time_ns() // 1000 * 1000 + next(self._seq) % 1000

    def _row(self, method: str, to: Recipient, activity: dict[str, Any], *, key: str | None,
             ref: str | None, context: dict[str, Any] | None, bulk: bool) -> dict[str, Any]:
        return {"id": uuid.uuid4().hex[:24], "seq": self._next_seq(), "dedupe_key": key,
                "method": method, "tenant_id": to.tenant_id,
                "organisation_id": to.organisation_id, "conversation_id": to.conversation_id,
                "service_url": to.service_url, "priority": priority_of(bulk), "ref": ref,
                "activity": activity, "context": dict(context or {}), "status": QUEUED,
                "attempts": 0, "next_attempt_ms": wall_ms(), "created_ms": self.clock.now_ms()}

    @staticmethod
    async def _insert(session: AsyncSession, values: dict[str, Any]) -> bool:
        conflict = ("dedupe_key",) if values.get("dedupe_key") is not None else ()
        result: Any = await session.execute(
            insert_ignoring(session, TeamsOutgoing, conflict), values)
        return bool(result.rowcount)

    async def send(self, to: Recipient, activity: dict[str, Any], *, key: str | None,
                   ref: str | None = None, context: dict[str, Any] | None = None,
                   bulk: bool = True) -> bool:
        """Queue a new activity; False when `key` was queued before (nothing added)."""
        async with unit_of_work(self.sessions) as session:
            added = await self._insert(session, self._row(
                SEND, to, activity, key=key, ref=ref, context=context, bulk=bulk))
        self.wake()
        return added

    async def send_many(self, sends: Sequence[Send], *, bulk: bool = True) -> int:
        """Queue a fan-out in a few transactions; how many were new."""
        added = 0
        for start in range(0, len(sends), WRITE_CHUNK):
            async with unit_of_work(self.sessions) as session:
                for item in sends[start:start + WRITE_CHUNK]:
                    added += await self._insert(session, self._row(
                        SEND, item.to, item.activity, key=item.key, ref=item.ref,
                        context=item.context, bulk=bulk))
        self.wake()
        return added

    async def update_row(self, row_id: str, activity: dict[str, Any], *,
                         context: dict[str, Any] | None = None, bulk: bool = False) -> bool:
        """Show `activity` in place of a send row's: changed before it goes when still
        queued, else an update queued after it. `context` is merged into the send row's
        (what the card shows now). False when the row is gone or failed."""
        async with unit_of_work(self.sessions) as session:
            row = (await session.scalars(select(TeamsOutgoing).where(
                TeamsOutgoing.id == row_id).with_for_update())).one_or_none()
            if row is None or row.status == FAILED:
                return False
            if context:
                row.add_context(context, self.clock.now_ms())
            if row.status == QUEUED and row.activity_id is None:
                row.activity = activity
                return True
            row.activity = activity  # what the card shows now (a refresh answers it)
            to = Recipient(row.tenant_id, row.organisation_id, row.conversation_id,
                           row.service_url)
            await self._insert(session, self._row(UPDATE, to, activity, key=None, ref=None,
                                                  context={"target": row.id}, bulk=bulk))
        self.wake()
        return True

    async def record_shown(self, row_id: str, activity: dict[str, Any],
                           context: dict[str, Any]) -> None:
        """What a sent card shows now that an invoke response replaced it for its reader
        (nothing is sent: Teams showed the answer)."""
        async with unit_of_work(self.sessions) as session:
            row = await session.get(TeamsOutgoing, row_id)
            if row is not None and row.activity_id is not None:
                row.activity = activity
                row.add_context(context, self.clock.now_ms())

    async def keys_queued(self, keys: list[str]) -> set[str]:
        """The `keys` with a row queued (`queued_with_key` of many)."""
        async with self.reads() as session:
            return await present_keys(session, TeamsOutgoing.dedupe_key, keys)

    async def queued_with_key(self, key: str) -> TeamsOutgoing | None:
        async with self.reads() as session:
            return (await session.scalars(select(TeamsOutgoing).where(
                TeamsOutgoing.dedupe_key == key))).one_or_none()

    async def with_ref(self, ref_prefix: str) -> list[TeamsOutgoing]:
        """The send rows whose ref starts with `ref_prefix`, oldest first (whatever their
        state: a card still queued is updated before it goes)."""
        async with self.reads() as session:
            return list(await session.scalars(
                select(TeamsOutgoing).where(TeamsOutgoing.method == SEND,
                                            starts_with(TeamsOutgoing.ref, ref_prefix))
                .order_by(TeamsOutgoing.seq)))

    async def latest_with_ref(self, ref: str, conversation_id: str) -> TeamsOutgoing | None:
        """The newest send row of this ref into this conversation (a card clicked there)."""
        async with self.reads() as session:
            return (await session.scalars(select(TeamsOutgoing).where(
                TeamsOutgoing.ref == ref, TeamsOutgoing.conversation_id == conversation_id,
                TeamsOutgoing.method == SEND).order_by(TeamsOutgoing.seq.desc()).limit(1)
            )).one_or_none()

    async def sent_as(self, activity_id: str, conversation_id: str, ref_prefix: str
                      ) -> TeamsOutgoing | None:
        """The send row the connector gave `activity_id` in this conversation, if its ref
        starts with `ref_prefix` (a message replying to one of our cards)."""
        async with self.reads() as session:
            return (await session.scalars(select(TeamsOutgoing).where(
                TeamsOutgoing.conversation_id == conversation_id,
                TeamsOutgoing.activity_id == activity_id, TeamsOutgoing.method == SEND,
                TeamsOutgoing.ref.startswith(ref_prefix)).limit(1))).one_or_none()

    async def pending(self) -> int:
        async with self.reads() as session:
            return int(await session.scalar(
                select(func.count()).select_from(TeamsOutgoing)
                .where(TeamsOutgoing.status.not_in([DONE, FAILED]))) or 0)
