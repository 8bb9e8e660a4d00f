"""What a processed reply recorded in `mail_replies` (timebot's state), shared by the single
review reply and the digest reply: the intent, written before the service is asked (a retry
after a crash then answers as the first attempt did), and the outcome, written with the
receipt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import cast

from sqlalchemy import Table, bindparam, update
from sqlalchemy.ext.asyncio import AsyncSession

from timebot.process.runtime import Runtime
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import MailReply


async def record_intent(runtime: Runtime, key: str, org_id: str, event_id: str,
                        approver_id: str, stage: int, action: str, detail: str) -> None:
    values = {
        "message_key": key, "organisation_id": org_id, "event_id": event_id,
        "approver_id": approver_id, "stage": stage, "action": action, "detail": detail,
        "created_ms": runtime.clock.now_ms(),
    }
    async with unit_of_work(runtime.state_sessions) as session:
        await session.execute(insert_ignoring(session, MailReply, ("message_key",)), values)


async def prior_reply(runtime: Runtime, key: str) -> MailReply | None:
    async with runtime.state_sessions() as session:
        return await session.get(MailReply, key)


# Built once, on the table: an ORM update (of the entity) also matched its condition against
# the session's objects each time, which cost more than the statement itself.
_REPLIES = cast(Table, MailReply.__table__)
_FINISH = (
    update(_REPLIES).where(_REPLIES.c.message_key == bindparam("finish_key"))
    .values(outcome=bindparam("finish_code"))
)


def finish(key: str, code: str) -> Callable[[AsyncSession], Awaitable[None]]:
    """The receipt's `record`: the reply's outcome, in the receipt's transaction."""
    async def record(session: AsyncSession) -> None:
        await session.execute(_FINISH, {"finish_key": key, "finish_code": code})

    return record
