"""Who else is asked while an approver is away (issue 28): on a stage whose quorum is "any",
a pending approver known to be away (timebot.state.away: an out-of-office auto-reply) makes the
review request go to the stage's other pending approvers with the reason (an `AwayReason`:
"Grace is away until Wed 02 Dec 2026", written in each reader's language and formats when
the request is written), once each (the dedupe key names the away approver), and only while
the timesheet still waits at that stage for them (the review decision reads the approval
state first).

Pure: the records and the stage's quorum are given; timebot.notify.reviews reads them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from timebot import l10n
from timebot.client import operation
from timebot.l10n import N_
from timebot.notify.away_facts import away_now
from timebot.state.away import Absence

QUORUM = operation(
    """query AwayQuorum($id: SvcId!) {
      getPerson(id: $id) { approvalStages { value { quorum } } }
    }"""
)


@dataclass(frozen=True)
class AwayReason:
    """Why someone is asked besides the stage's own way: these approvers are away, each
    (name, last day away — their own date; None: return date unknown); `nobody_else`: and no
    other approver of the stage can decide (the administrators are asked). Kept as facts until
    the reader is known: `text` (and `str`, for a template) writes it in the localisation in
    force, "Grace is away until Wed 02/12/2026"."""

    away: tuple[tuple[str, date | None], ...]
    nobody_else: bool = False

    def text(self, local: l10n.Localisation | None = None) -> str:
        reader = local or l10n.current()
        said = "; ".join(
            l10n.translate(reader, N_("{name} is away (return date unknown)")).format(name=name)
            if until is None else
            l10n.translate(reader, N_("{name} is away until {day}")).format(
                name=name, day=l10n.format_day(until, reader, year=True))
            for name, until in self.away)
        if self.nobody_else:
            return l10n.translate(reader, N_(
                "{reasons}, and no other approver of this stage can decide")).format(reasons=said)
        return said

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class AwayAsk:
    approver_id: str  # who is asked
    away_id: str  # because this approver is away
    reason: AwayReason


def away_dedupe_key(normal_key: str, away_id: str) -> str:
    """The key of a request asked because `away_id` is away (the normal key, extended)."""
    return f"{normal_key}:away:{away_id}"


def away_reason(name: str, absences: list[Absence], now_ms: int) -> AwayReason | None:
    """Pure: that Grace is away, until her last day away ("Grace is away until Wed 02 Dec
    2026") or with no return date known, or None when not away at `now_ms` (on Grace's own
    date: `away_now`)."""
    current = [absence for absence in absences if away_now(absence, now_ms)]
    if not current:
        return None
    if any(absence.until is None for absence in current):
        return AwayReason(((name, None),))
    return AwayReason(((name, max(a.until for a in current if a.until is not None)),))


def away_asks(
    pending: tuple[tuple[str, str], ...], recorded: dict[str, list[Absence]], quorum: str | None,
    now_ms: int,
) -> list[AwayAsk]:
    """Pure: for a stage's pending approvers (id, name), each (asked, away) pair: every
    approver not away, for every one who is — on a quorum "any" stage only (under "all"
    another approver cannot stand in)."""
    if (quorum or "any").strip().lower() != "any":
        return []
    reasons = {pid: away_reason(name, recorded.get(pid, []), now_ms) for pid, name in pending}
    away = [(pid, reason) for pid, reason in reasons.items() if reason is not None]
    return [AwayAsk(asked, away_id, reason) for asked, _ in pending if reasons[asked] is None
            for away_id, reason in away]


def stage_quorum(person: dict[str, object] | None, stage: int) -> str | None:
    """The quorum of stage `stage` in getPerson's approvalStages (the cascaded workflow)."""
    stages = ((person or {}).get("approvalStages") or {})
    values = stages.get("value") if isinstance(stages, dict) else None
    if not isinstance(values, list) or not 0 <= stage < len(values):
        return None
    entry = values[stage]
    quorum = entry.get("quorum") if isinstance(entry, dict) else None
    return str(quorum) if quorum else None
