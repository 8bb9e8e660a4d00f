"""Who else is asked about a timesheet that waits, and when (issue 28); pure decisions over the
facts `timebot.notify.escalation_tick` reads. timebot never decides for anyone: it only makes
sure someone who may decide is asked (the service lets a current stage's approvers and the
administrators decide).

- Away, others there: a pending approver of a quorum-"any" stage is away and another pending
  approver is not: the others are asked at once, with the reason (timebot.notify.away_asks,
  through the review dispatch).
- Away, nobody else: every pending approver still needed is away (a quorum-"any" stage whose
  pending approvers are all away, or a quorum-"all" stage waiting for an away approver): after
  the organisation's delay (`approvalEscalationDelay` working days, default 1, counted in the
  timesheet owner's days: their schedule and time zone) from when the stage began to wait,
  the administrators are asked, with the reason. Whether an approver is away is read on the
  approver's own date (`Absence.zone`).
- Climbing: with approval reminders every N days (`approvalReminder`), a stage still waiting
  2N days after it began: each pending approver's own people managers are asked to see to it
  (or the administrators when the approver has none)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Protocol

from timebot import l10n
from timebot.l10n import _
from timebot.notify.away_asks import AwayReason, away_reason
from timebot.notify.periods import zone as zone_of
from timebot.state.away import Absence
from timebot.summary import TimesheetSummary

DAY_MS = 86_400_000
DEFAULT_DELAY_DAYS = 1


def working_day(day: date) -> bool:
    """The organisation's working days when no schedule says otherwise: Monday to Friday."""
    return day.weekday() < 5


@dataclass(frozen=True)
class Calendar:
    """The days a delay counts: `working` overrides Monday to Friday day by day; its dates,
    and the days counted, are those of `zone` (the timesheet owner's time zone)."""

    working: dict[date, bool] = field(default_factory=dict)
    zone: str = "UTC"


def add_working_days(start_ms: int, days: int, working: dict[date, bool] | None = None,
                     time_zone: str = "UTC") -> int:
    """Pure: `days` working days after `start_ms`, counted in `time_zone`'s days (`working`
    overrides Monday to Friday day by day): the same local time of day on the `days`-th
    working day after. A start on a day off counts from the next working day's start."""
    planned = working or {}
    zone = zone_of(time_zone)
    moment = datetime.fromtimestamp(start_ms / 1000, zone)
    day = moment.date()
    if not planned.get(day, working_day(day)):
        moment = datetime(day.year, day.month, day.day, tzinfo=zone)
        while not planned.get(moment.date(), working_day(moment.date())):
            moment += timedelta(days=1)
    left = max(0, days)
    while left:
        moment += timedelta(days=1)
        if planned.get(moment.date(), working_day(moment.date())):
            left -= 1
    return int(moment.timestamp() * 1000)


def delay_days(setting: int | None) -> int:
    """Pure: the organisation's delay; null or 0 means the default."""
    return setting if setting and setting > 0 else DEFAULT_DELAY_DAYS


@dataclass(frozen=True)
class StageWait:
    """One timesheet waiting at its current stage."""

    submit_id: str
    stage: int
    owner_id: str
    owner_name: str
    entered_ms: int  # when the stage began to wait
    pending: tuple[tuple[str, str], ...]  # (id, name) of its pending approvers
    quorum: str  # "any" or "all"


@dataclass(frozen=True)
class Escalation:
    due_ms: int
    why: AwayReason  # every away approver, and nobody else can decide

    def reason(self) -> str:
        """In English house style (the preview's, the Journal's)."""
        return self.why.text(l10n.ENGLISH)


def escalation(wait: StageWait, facts: dict[str, list[Absence]], delay: int, now_ms: int,
               calendar: Calendar | None = None) -> Escalation | None:
    """Pure: when (and why) the administrators are to be asked about this stage, or None
    while someone who may decide is there (or nobody is away)."""
    reasons = {pid: away_reason(name, facts.get(pid, []), now_ms) for pid, name in wait.pending}
    away = [reason for reason in reasons.values() if reason is not None]
    if not away:
        return None
    if wait.quorum.strip().lower() != "all" and any(r is None for r in reasons.values()):
        return None  # another approver is there (asked by the review dispatch)
    days = calendar or Calendar()
    return Escalation(add_working_days(wait.entered_ms, delay, days.working, days.zone),
                      AwayReason(tuple(one for reason in away for one in reason.away),
                                 nobody_else=True))


def climb_due_ms(entered_ms: int, every_days: int | None) -> int | None:
    """Pure: when the climbing reminder goes (2N days after the stage began to wait), or None
    without approval reminders."""
    if not every_days or every_days <= 0:
        return None
    return entered_ms + 2 * every_days * DAY_MS


def climb_reason(approver_name: str, waited_days: int, every_days: int) -> str:
    return (f"{approver_name} has not decided in {waited_days} days (reminders every "
            f"{every_days} days); as their manager or an administrator")


def escalation_key(submit_id: str, stage: int, admin_id: str) -> str:
    return f"escalate:{submit_id}:{stage}:{admin_id}"


def climb_key(submit_id: str, stage: int, approver_id: str, recipient_id: str) -> str:
    return f"climb:{submit_id}:{stage}:{approver_id}:{recipient_id}"


def journal_text(reason: str, admins: list[str]) -> str:
    return (f"timebot asked the administrators ({', '.join(admins)}) to decide: {reason}.")


@dataclass(frozen=True)
class ClimbRequest:
    """The climbing reminder to one recipient (a people manager of the approver, or an
    administrator): not a review request. Only an administrator (`may_decide`) is offered
    to decide; a plain manager is told what they can do."""

    organisation_id: str
    submit_id: str
    stage: int
    stage_count: int
    recipient_id: str
    approver_name: str
    summary: TimesheetSummary  # the owner's, for the waiting period
    since_ms: int  # when the stage began to wait
    away: AwayReason | None  # the approver is away (written in the reader's formats)
    may_decide: bool
    administrators: tuple[str, ...]  # names (whom a manager may ask)
    dedupe_key: str


class ClimbChannel(Protocol):
    """A way of telling a climbing reminder (mail's e-mail, the bot's DM)."""

    async def already_sent(self, dedupe_key: str) -> bool: ...

    async def climb_request(self, request: ClimbRequest) -> bool:
        """Render and queue it; False when queued before or the recipient is not reached."""
        ...


def since_text(since_ms: int) -> str:
    """`Mon 02 Mar 2026`: the day in the reader's time zone, language and date format (the
    localisation in force)."""
    reader = l10n.current()
    day = datetime.fromtimestamp(since_ms / 1000, UTC).astimezone(zone_of(reader.time_zone))
    return l10n.format_day(day.date(), reader, year=True)


def climb_subject(request: ClimbRequest, period: str) -> str:
    return _("{owner}'s timesheet for {period} waits for {approver}").format(
        owner=request.summary.person_name, period=period, approver=request.approver_name)


def climb_paragraphs(request: ClimbRequest, period: str) -> list[str]:
    """Pure: what the climbing reminder says (mail and DM alike), in the language in force."""
    said = [_("{approver} has not decided {owner}'s timesheet for {period} since {since}.")
            .format(approver=request.approver_name, owner=request.summary.person_name,
                    period=period, since=since_text(request.since_ms))]
    if request.away is not None:
        said.append(request.away.text() + ".")
    if request.may_decide:
        said.append(_("As an administrator you may decide it yourself, or remind {approver}.")
                    .format(approver=request.approver_name))
    else:
        said.append(_("You can remind {approver} to decide it, or ask an administrator "
                      "({admins}) to decide it: only the stage's approvers and the "
                      "administrators may decide.").format(
            approver=request.approver_name,
            admins=", ".join(request.administrators) or _("none found")))
    return said
