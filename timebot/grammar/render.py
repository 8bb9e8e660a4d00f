"""The printed-back form of an entry, which parses to the same entry.

- 2h 30m on Mon 16 Mar 2026 · @acme/website · billable · wfh · “fixing the header”
- 9:00-11:30 (2h 30m) on Mon 16 Mar 2026 · @acme  (the range with an en dash)
- 1d on Fri 13 Mar 2026 · vacation
"""

from __future__ import annotations

from collections.abc import Sequence

from timebot.grammar.dates import format_day
from timebot.grammar.durations import format_days, format_minutes, format_wall
from timebot.grammar.entry import QUOTES
from timebot.grammar.model import MS_PER_MINUTE, ParsedEntry

SEPARATOR = " · "
EN_DASH = "\u2013"


def quote(text: str) -> str:
    """`text` in quotes that read back as exactly `text` (see entry.read_quoted)."""
    opener, closer = next(
        ((o, c) for o, c in QUOTES.items() if c not in text), next(iter(QUOTES.items()))
    )
    out: list[str] = []
    for index, ch in enumerate(text):
        following = text[index + 1] if index + 1 < len(text) else None
        if ch == closer:
            out.append("\\" + ch)
        elif ch == "\\" and following in (None, "\\", closer):
            out.append("\\\\")
        else:
            out.append(ch)
    return f"{opener}{''.join(out)}{closer}"


def _needs_quotes(segment: str) -> bool:
    return (
        not segment
        or segment[0] in QUOTES
        or segment.endswith(",")
        or any(ch.isspace() or ch in ";/·" for ch in segment)
    )


def format_target(path: Sequence[str]) -> str:
    """@acme/website, @"Acme Corp"/website."""
    return "@" + "/".join(quote(s) if _needs_quotes(s) else s for s in path)


def format_amount(entry: ParsedEntry) -> str:
    """2h 30m, 1d, or 9:00-11:30 (2h 30m) (with an en dash)."""
    if entry.days is not None:
        return format_days(entry.days)
    minutes = format_minutes((entry.duration_ms or 0) // MS_PER_MINUTE)
    if entry.start is None or entry.end is None:
        return minutes
    start = entry.start.hour * 60 + entry.start.minute
    end = 24 * 60 if entry.end.date() != entry.day else entry.end.hour * 60 + entry.end.minute
    return f"{format_wall(start)}{EN_DASH}{format_wall(end)} ({minutes})"


def describe(entry: ParsedEntry, head: str | None = None) -> str:
    """How the entry was read, in the canonical form that parses to the same entry; `head`:
    its amount and day written otherwise (a reader's formats: `timebot.timeentry.texts`)."""
    parts = [head or f"{format_amount(entry)} on {format_day(entry.day)}"]
    if entry.target is not None:
        parts.append(format_target(entry.target))
    if entry.billable is not None:
        parts.append("billable" if entry.billable else "non-billable")
    if entry.wfh:
        parts.append("wfh")
    if entry.absence_words:
        parts.append(" ".join(entry.absence_words))
    if entry.comment:
        parts.append(quote(entry.comment))
    return SEPARATOR.join(parts)


def describe_all(entries: Sequence[ParsedEntry]) -> str:
    """Several entries, one a line (as a mail receipt lists them)."""
    return "\n".join(describe(entry) for entry in entries)
