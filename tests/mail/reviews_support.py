"""Set-up helpers for the review-request, link, reminder and scheduler tests (no tests here).

Submissions go through POST /graphql with the people's own keys; the service's real webhook
deliveries reach the bot over loopback HTTP; what the bot sends is read from its outbox."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any

from sqlalchemy import select

from mail.review_component import ReviewComponent, component_of
from tests.support import DAY_MS, HOUR_MS, Member, Org, mail_of
from timebot.process.notifications import NotificationJobs, jobs_of
from timebot.process.runtime import Runtime
from timebot.state.models import OutboxMessage, ReceivedEvent

# Monday 5 October 2026, 00:00 UTC.
WEEK = 1_791_158_400_000
WEEK_END = WEEK + 7 * DAY_MS

SUBMIT = (
    "mutation($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
    "submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id submitId status stage } }"
)
APPROVE = "mutation($id: SvcId!) { approveTimesheet(id: $id) { id status stage } }"
REJECT = (
    "mutation($id: SvcId!, $st: Int!, $c: String!) { "
    "rejectTimesheet(id: $id, stage: $st, comment: $c) { id status } }"
)
STATE = (
    "query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { "
    "getApprovalState(personId: $p, startTime: $s, endTime: $e) { status currentStage "
    "submitId } }"
)
LINK = re.compile(r"https?://\S+/(a|r|s|prefs)/([a-z2-7]+)")


def runtime_of(org: Org) -> Runtime:
    return org.live.app.state.runtime  # type: ignore[no-any-return]


def component(org: Org) -> ReviewComponent:
    return component_of(runtime_of(org))


def jobs(org: Org) -> NotificationJobs:
    return jobs_of(runtime_of(org))


async def wait_for(
    check: Callable[[], Awaitable[Any]], seconds: float = 20.0, what: str = "condition"
) -> Any:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        value = await check()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def set_stages(org: Org, *stages: tuple[Member, ...], quorum: str = "any") -> None:
    await org.admin.gql(
        "mutation($s: [SvcApprovalStageInput]) { editOrganisationApprovalStages(stages: $s) "
        "{ id } }",
        {"s": [{"type": "person", "personIds": [m.id for m in members], "quorum": quorum}
               for members in stages]},
    )


async def add_record(owner: Member, day: int = 0, hours: int = 3, comment: str = "",
                     week: int = WEEK) -> str:
    data = await owner.gql(
        "mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!) {"
        " addTimeRecord(startTime: $s, duration: $d, personId: $p) { id } }",
        {"s": week + day * DAY_MS + 9 * HOUR_MS, "d": hours * HOUR_MS, "p": owner.id},
    )
    record_id = str(data["addTimeRecord"]["id"])
    if comment:
        await owner.gql(
            "mutation($id: SvcId!, $c: String!) { editTimeRecordComment(id: $id, comment: $c) "
            "{ id } }", {"id": record_id, "c": comment},
        )
    return record_id


async def submit(owner: Member, week: int = WEEK) -> dict[str, Any]:
    data = await owner.gql(SUBMIT, {"p": owner.id, "s": week, "e": week + 7 * DAY_MS})
    return dict(data["submitTimesheet"])


async def org_events(runtime: Runtime, org_id: str) -> list[ReceivedEvent]:
    async with runtime.state_sessions() as session:
        return list(await session.scalars(
            select(ReceivedEvent).where(ReceivedEvent.organisation_id == org_id)
        ))


async def settle(runtime: Runtime, org_id: str, count: int) -> None:
    """Wait until `count` events of the organisation arrived and were all dispatched (a
    setting's edit, `settingsUpdate`, not counted)."""

    async def done() -> bool:
        rows = await org_events(runtime, org_id)
        counted = [row for row in rows if row.event != "settingsUpdate"]
        return len(counted) >= count and all(row.status == "done" for row in rows)

    await wait_for(done, what=f"{count} dispatched events")


async def settings_seen(runtime: Runtime, org_id: str, count: int = 1) -> None:
    """Wait until `count` settingsUpdate events of the organisation were dispatched (the
    fronts' rules of time entry forgotten)."""

    async def done() -> bool:
        rows = [row for row in await org_events(runtime, org_id)
                if row.event == "settingsUpdate" and row.status == "done"]
        return len(rows) >= count

    await wait_for(done, what=f"{count} settingsUpdate events dispatched")


async def outbox_rows(runtime: Runtime, address: str, kind: str | None = None
                      ) -> list[OutboxMessage]:
    rows = await mail_of(runtime).outbox.messages(kind)
    return [row for row in rows if address.lower() in [r.lower() for r in row.rcpt_tos]]


def parse(raw: bytes) -> EmailMessage:
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    return message


async def mails(runtime: Runtime, member: Member, kind: str | None = None
                ) -> list[EmailMessage]:
    return [parse(row.raw) for row in await outbox_rows(runtime, member.email, kind)]


def text_part(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


def html_part(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())  # type: ignore[attr-defined]


def links(message: EmailMessage) -> dict[str, str]:
    """{"a": url, "r": url, "s": url, "prefs": url} found in the text part."""
    return {kind: match.group(0) for match in LINK.finditer(text_part(message))
            for kind in [match.group(1)]}
