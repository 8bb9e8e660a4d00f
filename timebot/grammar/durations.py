"""Durations (2h30, 90min, 1.5h, 1:30, a bare number of hours, 1d) and time ranges (9-11:30)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from timebot.grammar.model import MS_PER_MINUTE, Problem

#: spaces inside one token: any whitespace but a line break (lines separate entries)
SP = r"[^\S\n]*"
#: what may follow a token: the end, a space, an entry separator, the `·` of the printed form,
#: or a trailing comma ("2h, fixing")
BOUND = r"(?=$|[\s;·]|,(?:$|[\s;·]))"

NUM = r"\d+(?:[.,]\d+)?"
H_UNIT = r"(?:hours?|hrs?|h)"
M_UNIT = r"(?:minutes?|mins?|m)"
D_UNIT = r"(?:days?|d)"

MAX_MINUTES = 24 * 60
#: a range is typed with a hyphen, an en dash or an em dash
DASHES = "-\u2013\u2014"

_DURATIONS: list[tuple[str, re.Pattern[str]]] = [
    ("hm", re.compile(rf"(?P<h>\d+){SP}{H_UNIT}{SP}(?P<m>\d+){SP}{M_UNIT}{BOUND}", re.I)),
    ("hm", re.compile(rf"(?P<h>\d+)h(?P<m>\d{{1,2}}){BOUND}", re.I)),
    ("h", re.compile(rf"(?P<h>{NUM}){SP}{H_UNIT}{BOUND}", re.I)),
    ("m", re.compile(rf"(?P<m>\d+){SP}{M_UNIT}{BOUND}", re.I)),
    ("d", re.compile(rf"(?P<d>{NUM}){SP}{D_UNIT}{BOUND}", re.I)),
    ("clock", re.compile(rf"(?P<h>\d{{1,2}}):(?P<m>\d\d){BOUND}")),
    ("bare", re.compile(rf"(?P<h>{NUM}){BOUND}")),
]


def _time(p: str) -> str:
    return rf"(?P<{p}h>\d{{1,2}})(?::(?P<{p}m>\d\d))?(?:{SP}(?P<{p}ap>[ap])\.?m\.?)?"


_RANGE = re.compile(
    rf"{_time('s')}{SP}[{DASHES}]{SP}{_time('e')}(?:{SP}\((?P<paren>[^()\n]*)\))?{BOUND}", re.I
)


@dataclass(frozen=True)
class Amount:
    """A typed duration: whole minutes, or (unit "d") a number of days."""

    minutes: int | None
    days: Decimal | None
    bare: bool = False

    @property
    def duration_ms(self) -> int | None:
        return None if self.minutes is None else self.minutes * MS_PER_MINUTE


@dataclass(frozen=True)
class WallRange:
    """A range as typed: wall-clock minutes since the day's midnight (end may be 24:00)."""

    start_minute: int
    end_minute: int
    #: the "(2h 30m)" a printed-back range carries, to be checked against the real duration
    stated: Amount | None


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text.replace(",", "."))
    except InvalidOperation:  # pragma: no cover - the regexes only let digits through
        raise ValueError(text) from None


def _check_minutes(minutes: int, pos: int, token: str, capped: bool = True) -> int:
    if minutes <= 0:
        raise Problem("A duration must be more than zero", pos, token, "Write e.g. 2h or 30m.")
    if capped and minutes > MAX_MINUTES:
        raise Problem(
            "A duration can be at most 24 hours",
            pos,
            token,
            "One entry covers one day; write one entry per day, separated by ;.",
        )
    return minutes


_BARE = re.compile(rf"{NUM}{BOUND}")


def match_bare_number(text: str, pos: int, endpos: int) -> int | None:
    """The end of a bare number at `pos` (whatever its value), or None."""
    m = _BARE.match(text, pos, endpos)
    return None if m is None else m.end()


def match_duration(
    text: str, pos: int, endpos: int, capped: bool = True
) -> tuple[int, Amount] | None:
    """The duration starting at `pos` (its end and value), or None; Problem if it is invalid.

    `capped`: at most 24 hours (not so for the stated length of a range: a day with the clocks
    going back has 25).
    """
    for kind, pattern in _DURATIONS:
        m = pattern.match(text, pos, endpos)
        if m is None:
            continue
        token = m.group(0)
        if kind == "hm":
            hours, minutes = int(m["h"]), int(m["m"])
            if minutes >= 60:
                raise Problem(
                    "The minutes after the hours must be under 60", pos, token, "Write e.g. 2h30."
                )
            total = hours * 60 + minutes
        elif kind == "clock":
            hours, minutes = int(m["h"]), int(m["m"])
            if minutes >= 60:
                raise Problem("The minutes must be under 60", pos, token, "Write e.g. 1:30.")
            total = hours * 60 + minutes
        elif kind == "m":
            total = int(m["m"])
        elif kind == "d":
            days = _decimal(m["d"])
            if days <= 0 or days > 1:
                raise Problem(
                    "A duration in days must be more than 0 and at most 1",
                    pos,
                    token,
                    "One entry covers one day; write one entry per day, separated by ;.",
                )
            return m.end(), Amount(minutes=None, days=days.normalize())
        else:  # "h" and "bare": hours, maybe with decimals, rounded to the minute
            hours_d = _decimal(m["h"])
            if kind == "bare" and hours_d > 24:
                raise Problem(
                    "A bare number means hours, at most 24",
                    pos,
                    token,
                    "Write 25m for minutes, or put the comment in quotes.",
                )
            total = int((hours_d * 60).quantize(Decimal(1), rounding=ROUND_HALF_UP))
            return m.end(), Amount(
                minutes=_check_minutes(total, pos, token, capped), days=None, bare=kind == "bare"
            )
        return m.end(), Amount(minutes=_check_minutes(total, pos, token, capped), days=None)
    return None


def _wall_minute(hour: int, minute: int, meridiem: str | None, pos: int, token: str) -> int:
    if minute >= 60:
        raise Problem("The minutes must be under 60", pos, token, "Write e.g. 9:30-11:00.")
    if meridiem is not None:
        if not 1 <= hour <= 12:
            raise Problem("With am/pm the hour must be 1 to 12", pos, token, "Write e.g. 9am-1pm.")
        hour = hour % 12 + (12 if meridiem == "p" else 0)
    elif hour > 24 or (hour == 24 and minute):
        raise Problem("No such time of day", pos, token, "Write e.g. 9:00-17:30.")
    return hour * 60 + minute


def match_range(text: str, pos: int, endpos: int) -> tuple[int, WallRange] | None:
    """The time range starting at `pos` (its end and wall-clock value), or None."""
    m = _RANGE.match(text, pos, endpos)
    if m is None:
        return None
    token = m.group(0)
    s_ap = m["sap"].lower() if m["sap"] else None
    e_ap = m["eap"].lower() if m["eap"] else None
    s_h, s_m = int(m["sh"]), int(m["sm"] or 0)
    end = _wall_minute(int(m["eh"]), int(m["em"] or 0), e_ap, pos, token)
    start = _wall_minute(s_h, s_m, s_ap, pos, token)
    if s_ap is None and e_ap is not None and 1 <= s_h <= 12:
        # "1-3pm" means 13:00-15:00, but "9-1pm" means 9:00-13:00
        inherited = _wall_minute(s_h, s_m, e_ap, pos, token)
        if inherited < end:
            start = inherited
    if start >= 24 * 60:
        raise Problem("A range cannot start at 24:00", pos, token, "Write e.g. 9:00-17:30.")
    if end == 0 and start > 0:
        end = 24 * 60  # "22:00-0:00" ends at midnight
    if end <= start:
        raise Problem(
            "The range ends before it starts",
            pos,
            token,
            "Use 24-hour times (9-17) or am/pm (9am-5pm); past midnight, log the rest on the"
            " next day. If this is part of the comment, put the comment in quotes.",
        )
    stated: Amount | None = None
    if m["paren"] is not None:
        inner = m["paren"].strip()
        offset = m.start("paren") + (len(m["paren"]) - len(m["paren"].lstrip()))
        found = match_duration(text, offset, offset + len(inner), False) if inner else None
        if found is None or found[0] != offset + len(inner) or found[1].minutes is None:
            raise Problem(
                "Expected a duration in the brackets after the range",
                m.start("paren") - 1,
                f"({m['paren']})",
                "Write e.g. 9:00-11:30 (2h 30m), or leave the brackets out.",
            )
        stated = found[1]
    return m.end(), WallRange(start, end, stated)


def format_minutes(minutes: int) -> str:
    """2h 30m, 2h, 45m."""
    hours, rest = divmod(minutes, 60)
    if hours and rest:
        return f"{hours}h {rest}m"
    return f"{hours}h" if hours else f"{rest}m"


def format_days(days: Decimal) -> str:
    return f"{format(days.normalize(), 'f')}d"


def format_wall(minute: int) -> str:
    hours, rest = divmod(minute, 60)
    return f"{hours}:{rest:02d}"
