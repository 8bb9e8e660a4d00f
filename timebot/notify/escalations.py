"""Who else is asked about a timesheet that waits, and when (issue 28); pure decisions over the
facts `timebot.notify.escalation_tick` reads. timebot never decides for anyone: it only makes
sure someone who may decide is asked (the service lets a current stage's approvers and the
administrators decide).

- Away, others there: a pending approver of a quorum-"any" stage is away and another pending
  approver is not: the others are asked at once, with the reason (timebot.notify.away_asks,
  through the review dispatch).
- Away, nobody else: every pending approver still needed is away (a quorum-"any" stage whose
  pending approvers are all away, or a quorum-"all" stage waiting for an away approver): after
  the organisation's delay (`approvalEscalationDelay` working days, default 1) from when the
  stage began to wait, the administrators are asked, with the reason.
- Climbing: with approval reminders every N days (`approvalReminder`), a stage still waiting
  2N days after it began: each pending approver's own people managers are asked to see to it
  (or the administrators when the approver has none)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from timebot.notify.away_asks import away_reason
from timebot.state.away import Absence

DAY_MS = 86_400_000
DEFAULT_DELAY_DAYS = 1


def working_day(day: date) -> bool:
    """The organisation's working days when no schedule says otherwise: Monday to Friday."""
    return day.weekday() < 5


def add_working_days(start_ms: int, days: int, working: dict[date, bool] | None = None) -> int:
    """Pure: `days` working days after `start_ms` (UTC days; `working` overrides Monday to
    Friday day by day): the same time of day on the `days`-th working day after. A start on a
    day off counts from the next working day's start."""
    planned = working or {}
    moment = datetime.fromtimestamp(start_ms / 1000, UTC)
    day = moment.date()
    if not planned.get(day, working_day(day)):
        moment = datetime(day.year, day.month, day.day, tzinfo=UTC)
        while not planned.get(moment.date(), working_day(moment.date())):
            moment += timedelta(days=1)
        day = moment.date()
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
    reasons: tuple[str, ...]  # "Grace is away until Wed 02 Dec 2026", one per away approver

    def reason(self) -> str:
        return "; ".join(self.reasons) + ", and no other approver of this stage can decide"


def escalation(wait: StageWait, facts: dict[str, list[Absence]], delay: int, now_ms: int,
               working: dict[date, bool] | None = None) -> Escalation | None:
    """Pure: when (and why) the administrators are to be asked about this stage, or None
    while someone who may decide is there (or nobody is away)."""
    reasons = {pid: away_reason(name, facts.get(pid, []), now_ms) for pid, name in wait.pending}
    away = [reason for reason in reasons.values() if reason is not None]
    if not away:
        return None
    if wait.quorum.strip().lower() != "all" and any(r is None for r in reasons.values()):
        return None  # another approver is there (asked by the review dispatch)
    return Escalation(add_working_days(wait.entered_ms, delay, working), tuple(away))


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
