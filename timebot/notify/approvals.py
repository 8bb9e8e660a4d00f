"""The approval state as the notifications read it over GraphQL (with the organisation's
integration key): the current state of a submission, the person it concerns, a period as its
owner reads it, and how a person chose to hear of what waits for them (at once, or in a
daily digest)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.db import unit_of_work
from timebot import l10n
from timebot.client import ServiceClient, operation
from timebot.l10n import LOCALISATION_FIELDS
from timebot.notify.ground import Ground
from timebot.state.models import NotificationPreference

INSTANT = "instant"
DIGEST = "digest"
MODES = (INSTANT, DIGEST)

EVENT_PERIOD = operation(
    """query ReviewEvent($id: SvcId!) {
      getApprovalEventById(id: $id) { id submitId person { id } startTime { ts } endTime { ts } }
    }"""
)
# What an ApprovalSnapshot is made of (`snapshot_of`), read at $p, $s, $e.
STATE_SELECTION = """getApprovalState(personId: $p, startTime: $s, endTime: $e) {
        status currentStage submitId by { id name }
        pendingApprovers { id name }
        stageDetails { stage skipped approvedBy { person { id name } } }
      }"""
APPROVAL_STATE = operation(
    f"""query ReviewState($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {{
      {STATE_SELECTION}
    }}"""
)
# A person as the mails to them read it (`person_info`), at $id.
PERSON_FIELDS = f"""id name email archived
        timeSettings {{ approvalReminder {{ value }} }}
        {LOCALISATION_FIELDS}"""
PERSON = operation(
    f"""query ReviewPerson($id: SvcId!) {{
      getPerson(id: $id) {{
        {PERSON_FIELDS}
      }}
    }}"""
)
# An extension of the embedded service, asked for only where the service offers it.
PERSON_AUTO_SUBMIT_EXTENSION = operation(
    """query ReviewPersonAutoSubmit($id: SvcId!) {
      getPerson(id: $id) { timeSettings { autoSubmit { value } } }
    }"""
)


def period_label(start_ms: int, end_ms: int, time_zone: str = "UTC",
                 local: l10n.Localisation | None = None) -> str:
    """`Mon 02 Mar to Sun 08 Mar 2026` in the owner's time zone (end exclusive), in the
    reader's language and date format (`local`, default: the one in force)."""
    reader = local or l10n.current()
    return l10n.format_period(start_ms, end_ms, replace(reader, time_zone=time_zone))


@dataclass(frozen=True)
class ApprovalSnapshot:
    """The current approval state of the timesheet a submit event belongs to."""

    person_id: str
    start_ms: int
    end_ms: int
    status: str | None
    stage: int | None
    submit_id: str | None
    pending: tuple[tuple[str, str], ...]  # (id, name)
    stage_count: int
    approved_by: dict[int, tuple[str, ...]]  # stage -> names
    by_name: str | None

    def pending_ids(self) -> set[str]:
        return {pid for pid, _ in self.pending}

    def waits_at(self, submit_id: str, stage: int) -> bool:
        """Whether this submission still waits at this stage (an event about it is not
        stale: decided, replaced, or moved on)."""
        return self.submit_id == submit_id and self.status == "s" and self.stage == stage


async def approval_snapshot(
    client: ServiceClient, key: str, submit_id: str
) -> ApprovalSnapshot | None:
    """None when the submit event is unknown."""
    event = (await client.execute(EVENT_PERIOD, {"id": submit_id}, apikey=key)).get(
        "getApprovalEventById"
    )
    if not event:
        return None
    person_id = str(event["person"]["id"])
    start, end = int(event["startTime"]["ts"]), int(event["endTime"]["ts"])
    state = (
        await client.execute(APPROVAL_STATE, {"p": person_id, "s": start, "e": end}, apikey=key)
    )["getApprovalState"] or {}
    return snapshot_of(person_id, start, end, state)


def snapshot_of(person_id: str, start: int, end: int, state: dict[str, Any]) -> ApprovalSnapshot:
    """Pure: the snapshot of what STATE_SELECTION answered for this person's period."""
    details = state.get("stageDetails") or []
    return ApprovalSnapshot(
        person_id=person_id,
        start_ms=start,
        end_ms=end,
        status=state.get("status"),
        stage=state.get("currentStage"),
        submit_id=state.get("submitId"),
        pending=tuple((str(p["id"]), str(p["name"])) for p in state.get("pendingApprovers") or []),
        stage_count=len(details),
        approved_by={
            int(d["stage"]): tuple(
                str((a.get("person") or {}).get("name") or "") for a in d.get("approvedBy") or []
            )
            for d in details
        },
        by_name=(state.get("by") or {}).get("name"),
    )


async def person_info(client: ServiceClient, key: str, person_id: str) -> dict[str, Any] | None:
    found = (await client.execute(PERSON, {"id": person_id}, apikey=key, allow_partial=True)).get(
        "getPerson"
    )
    if not found:
        return None
    person = dict(found)
    if await client.offers("SvcTimeSettings", "autoSubmit", apikey=key):
        extra = (await client.execute(
            PERSON_AUTO_SUBMIT_EXTENSION, {"id": person_id}, apikey=key, allow_partial=True
        )).get("getPerson") or {}
        settings = extra.get("timeSettings") or {}
        person["timeSettings"] = {**(person.get("timeSettings") or {}), **settings}
    return person


def time_zone_of(person: dict[str, Any]) -> str:
    return str(((person.get("localisation") or {}).get("timeZone") or {}).get("value") or "UTC")


def setting_of(person: dict[str, Any], name: str) -> int | None:
    value = ((person.get("timeSettings") or {}).get(name) or {}).get("value")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


async def preference(runtime: Ground, organisation_id: str, person_id: str) -> str:
    async with runtime.read_sessions() as session:
        row = await session.get(NotificationPreference, (organisation_id, person_id))
        return row.mode if row is not None else INSTANT


async def digest_readers(
    session: AsyncSession, organisation_id: str, person_ids: Collection[str]
) -> set[str]:
    """Those of these people whose `preference` is the digest, in one read (callers chunk)."""
    if not person_ids:
        return set()
    return set(await session.scalars(select(NotificationPreference.person_id).where(
        NotificationPreference.organisation_id == organisation_id,
        NotificationPreference.person_id.in_(person_ids),
        NotificationPreference.mode == DIGEST,
    )))


async def set_preference(runtime: Ground, organisation_id: str, person_id: str, mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    async with unit_of_work(runtime.state_sessions) as session:
        row = await session.get(NotificationPreference, (organisation_id, person_id))
        if row is None:
            row = NotificationPreference(organisation_id=organisation_id, person_id=person_id)
            session.add(row)
        row.mode = mode
        row.updated_ms = runtime.clock.now_ms()

