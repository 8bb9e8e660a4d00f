"""The readings of the entry grammar: what parse_entry returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

MS_PER_MINUTE = 60_000
MS_PER_HOUR = 3_600_000


@dataclass(frozen=True)
class ParsedEntry:
    """One time entry as read from the text.

    Exactly one of `duration_ms` and `days` is set: `days` when the amount was typed in day
    units ("1d", "0.5d"; for absences counted in days, the caller converts by the absence type's
    unit), `duration_ms` otherwise. For a range (`9:00-11:30`) `start` and `end` are aware
    datetimes in the person's zone and `duration_ms` is the real elapsed time between them (so a
    range across a daylight-saving change counts the hour that was skipped or repeated).

    `start_ms` (UTC Unix milliseconds) is the range start, or the start of `day` in the zone.
    Without a `@target`, the free words are `absence_words` (to be matched with
    `match_absence`) and only quoted text is the comment; with a target, all free words are the
    comment.
    """

    day: date
    duration_ms: int | None
    days: Decimal | None
    start: datetime | None
    end: datetime | None
    start_ms: int
    target: tuple[str, ...] | None
    absence_words: tuple[str, ...]
    wfh: bool
    billable: bool | None
    comment: str | None
    #: where the entry stands in the parsed text: (first, end) character offsets
    span: tuple[int, int] = field(default=(0, 0), compare=False)

    @property
    def is_range(self) -> bool:
        return self.start is not None


@dataclass(frozen=True)
class ParseError:
    """What was not understood, and where (`position`: 0-based offset in the whole text)."""

    message: str
    position: int
    token: str
    hint: str = ""
    #: 0-based index of the entry (`;`- or line-separated) the error is in
    entry_index: int = 0

    def __str__(self) -> str:
        text = f"{self.message}: “{self.token}” at character {self.position + 1}"
        return f"{text}. {self.hint}" if self.hint else f"{text}."


ParseResult = list[ParsedEntry] | ParseError


class Problem(Exception):
    """Raised inside the grammar; parse_entry turns it into a ParseError."""

    def __init__(self, message: str, position: int, token: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.position = position
        self.token = token
        self.hint = hint
