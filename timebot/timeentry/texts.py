"""Pure texts and periods of quick time entry: weeks in the person's zone, numbered entry
lists, the week summary and the timesheet status, in plain words — in the reader's language
and formats (`timebot.l10n`, set by the front around the call; English house style when
nothing was chosen). An entry's reading is in the reader's formats (`entry_reading`); what
reads back as an entry (`entry_text`, the choices offered) stays in the grammar's own words:
`/time` understands those."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from timebot import l10n
from timebot.grammar.dates import format_day
from timebot.grammar.durations import format_days
from timebot.grammar.model import ParsedEntry
from timebot.grammar.render import EN_DASH, describe, format_target, quote
from timebot.l10n import N_, _
from timebot.summary import TimesheetSummary, hours

STATUS_WORDS = {
    "d": N_("draft (not submitted)"),
    "s": N_("submitted, awaiting approval"),
    "a": N_("approved"),
    "r": N_("rejected"),
}
# Per period noun (plumbing.periods.NOUNS): whole phrases, so that each language agrees them.
PERIOD_LABELS = {
    "day": N_("the day of {first} to {last}"),
    "week": N_("the week of {first} to {last}"),
    "fortnight": N_("the fortnight of {first} to {last}"),
    "half-month": N_("the half-month of {first} to {last}"),
    "month": N_("the month of {first} to {last}"),
}
PERIOD_HEADS = {
    "day": N_("Day of {day}: {total} · timesheet {state}"),
    "week": N_("Week of {day}: {total} · timesheet {state}"),
    "fortnight": N_("Fortnight of {day}: {total} · timesheet {state}"),
    "half-month": N_("Half-month of {day}: {total} · timesheet {state}"),
    "month": N_("Month of {day}: {total} · timesheet {state}"),
}
THIS_PERIOD = {"day": N_("This day"), "week": N_("This week"),
               "fortnight": N_("This fortnight"), "half-month": N_("This half-month"),
               "month": N_("This month")}
LAST_PERIOD = {"day": N_("Last day"), "week": N_("Last week"),
               "fortnight": N_("Last fortnight"), "half-month": N_("Last half-month"),
               "month": N_("Last month")}


def reader() -> l10n.Localisation | None:
    """The reader's localisation where it differs from the house style (English, no date
    format chosen), else None (the output English has always had)."""
    local = l10n.current()
    return local if local.lang != "en" or local.date_format else None


def house_style(local: l10n.Localisation) -> bool:
    """Whether the reader reads the grammar's own words: English, and no date, clock,
    duration or number format chosen."""
    return (local.lang == "en" and not local.date_format and local.time_format != 12
            and local.duration_format is None and local.decimal is None
            and local.thousands is None)


def entry_reading(entry: ParsedEntry) -> str:
    """How an entry was read, as a receipt shows it: the grammar's canonical words
    (`describe`) for a reader of the house style, else its amount, clock and day in the
    reader's formats (`lun. 18/03/2026`, `2:00 PM to 3:30 PM`). What `/time` reads back (the
    Edit form, the choices of an ambiguous entry) keeps the grammar's words."""
    local = l10n.current()
    if house_style(local):
        return describe(entry)
    if entry.days is not None:
        amount = format_days(entry.days)
    else:
        amount = l10n.format_duration(entry.duration_ms or 0, local)
        if entry.start is not None and entry.end is not None:
            amount = (f"{l10n.format_time(entry.start, local)}{EN_DASH}"
                      f"{l10n.format_time(entry.end, local)} ({amount})")
    return describe(entry, _("{duration} on {day}").format(duration=amount,
                                                           day=day_text(entry.day)))


def day_text(day: date) -> str:
    """`Mon 16 Mar 2026`; `lun. 16 mars 2026` or `lun. 16/03/2026` for a French reader."""
    return l10n.format_entry_day(day, l10n.current())


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Period:
    """A timesheet's period in the person's zone: a week (Monday 00:00 to the next Monday
    00:00) unless their `periodicity` says otherwise (`noun`: week, month …)."""

    first_day: date
    start_ms: int
    end_ms: int
    days: int = 7
    noun: str = "week"

    @property
    def last_day(self) -> date:
        return self.first_day + timedelta(days=self.days - 1)

    @property
    def label(self) -> str:
        return _(PERIOD_LABELS.get(self.noun, PERIOD_LABELS["week"])).format(
            first=day_text(self.first_day), last=day_text(self.last_day))


def _ms(moment: datetime) -> int:
    return (moment.astimezone(UTC) - _EPOCH) // timedelta(milliseconds=1)


def local_midnight_ms(day: date, zone: ZoneInfo) -> int:
    return _ms(datetime.combine(day, time(0), zone))


def week_of(today: date, zone: ZoneInfo, weeks_back: int = 0) -> Period:
    monday = today - timedelta(days=today.weekday()) - timedelta(weeks=weeks_back)
    return Period(monday, local_midnight_ms(monday, zone),
                  local_midnight_ms(monday + timedelta(days=7), zone))


def today_in(zone: ZoneInfo, now_ms: int) -> date:
    return datetime.fromtimestamp(now_ms / 1000, tz=UTC).astimezone(zone).date()


def local_day(ms: int, zone: ZoneInfo) -> date:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).astimezone(zone).date()


def record_target(record: Mapping[str, Any]) -> str:
    absence = (record.get("absence") or {}).get("name")
    if absence:
        return str(absence)
    names = [str(p["name"]) for p in record.get("projects") or [] if p]
    task = (record.get("task") or {}).get("name")
    if task:
        names.append(str(task))
    return "/".join(names) or _("(no project)")


def format_record(record: Mapping[str, Any], zone: ZoneInfo,
                  show: Callable[[int], str] = hours) -> str:
    """2h 30m on Mon 16 Mar 2026 · Acme/Website · wfh · “the comment” (`show`: the person's
    `durationFormat`)."""
    start = int(record["startTime"]["ts"])
    parts = [_("{duration} on {day}").format(duration=show(int(record["duration"])),
                                             day=day_text(local_day(start, zone))),
             record_target(record)]
    if record.get("nonBillable"):
        parts.append(_("non-billable"))
    if record.get("wfh"):
        parts.append(_("wfh"))
    if record.get("comment"):
        parts.append(quote(str(record["comment"])))
    return " · ".join(parts)


def entry_text(record: Mapping[str, Any], zone: ZoneInfo) -> str:
    """A record written as an entry `/time` reads back (for an Edit form)."""
    start = int(record["startTime"]["ts"])
    minutes = round(int(record["duration"]) / 60_000)
    amount = f"{minutes // 60}h{minutes % 60:02d}" if minutes % 60 else f"{minutes // 60}h"
    if minutes < 60:
        amount = f"{minutes}m"
    parts = [amount, "on", format_day(local_day(start, zone))]
    absence = (record.get("absence") or {}).get("name")
    if absence:
        parts.append(str(absence))
    else:
        names = [str(p["name"]) for p in record.get("projects") or [] if p]
        task = (record.get("task") or {}).get("name")
        path = [*names[:1], *([str(task)] if task else [])]
        if path:
            parts.append(format_target(path))
    if record.get("nonBillable"):
        parts.append("!nb")
    if record.get("wfh"):
        parts.append("#wfh")
    if record.get("comment"):
        parts.append(quote(str(record["comment"])))
    return " ".join(parts)


def sort_recent(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Most recent day first (then the later start, then id): the numbering of `/time list`."""
    return sorted(records, key=lambda r: (-int(r["startTime"]["ts"]), str(r["id"])))


def format_listing(records: Sequence[Mapping[str, Any]], zone: ZoneInfo,
                   show: Callable[[int], str] = hours) -> str:
    if not records:
        return _("No entries in the last two weeks.")
    lines = [f"{n}. {format_record(r, zone, show)}" for n, r in enumerate(records, 1)]
    return "\n".join(lines)


def format_state(state: Mapping[str, Any]) -> str:
    status = str(state.get("status") or "d")
    words = _(STATUS_WORDS[status]) if status in STATUS_WORDS else status
    pending = [str(p["name"]) for p in state.get("pendingApprovers") or [] if p]
    if status == "s" and pending:
        words += " " + _("(waiting for {names})").format(names=", ".join(pending))
    return words


def format_week(summary: TimesheetSummary, period: Period, state: Mapping[str, Any],
                show: Callable[[int], str] = hours) -> str:
    lines = [_(PERIOD_HEADS.get(period.noun, PERIOD_HEADS["week"])).format(
        day=day_text(period.first_day), total=show(summary.total_ms), state=format_state(state))]
    by_day = dict(summary.by_day)
    for offset in range(period.days):
        day = period.first_day + timedelta(days=offset)
        if day in by_day:
            lines.append(f"  {day_text(day)}: {show(by_day[day])}")
    for name, ms in summary.by_project:
        lines.append(f"  {name}: {show(ms)}")
    for name, ms in summary.absences:
        lines.append("  " + _("{name} (absence): {duration}").format(name=name,
                                                                      duration=show(ms)))
    if not summary.entries:
        lines.append("  " + _("No entries."))
    return "\n".join(lines)


def period_status(period: Period, last: bool, state: Mapping[str, Any]) -> str:
    """`This week (Mon 16 Mar 2026 to Sun 22 Mar 2026): approved`."""
    names = LAST_PERIOD if last else THIS_PERIOD
    return _("{name} ({first} to {last}): {state}").format(
        name=_(names.get(period.noun, names["week"])), first=day_text(period.first_day),
        last=day_text(period.last_day), state=format_state(state))


def help_text() -> str:
    """What `/time` understands, in the reader's language."""
    return _(HELP)


HELP = N_(
    """Log time: `/time 2h @acme/website fixing the header` · `/time 9:00-11:30 @acme yesterday`
· `/time 1d vacation friday` · `/time 1:30 @acme $ #wfh "call with Bob"`
· several at once: separate them with `;`
Durations 2h, 2h30, 90m, 1.5h, 1:30, ranges 9-11:30, 9am-1pm; dates today, yesterday, mon,
last fri, 2026-03-15, 15.03.; `$` billable, `!nb` non-billable, `#wfh` worked from home.
`/time list` your recent entries, numbered · `/time edit <n> <entry>` replace entry n ·
`/time delete <n>` · `/time undo` removes what you last logged · `/time week [last]` hours by
day and project, and the timesheet's status · `/timesheet submit [last]` · `/timesheet status`
By mail: write one entry a line to time@ (the same words).""")
