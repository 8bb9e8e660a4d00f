"""Dates: today, yesterday, weekday names, last mon, 2026-03-15, 15.03., 15.03.2026, 16 Mar 2026."""

from __future__ import annotations

import re
from datetime import date, timedelta

from timebot.grammar.durations import BOUND, SP
from timebot.grammar.model import Problem

WEEKDAYS: dict[str, int] = {}
for _index, _names in enumerate(
    [
        ("monday", "mon"),
        ("tuesday", "tues", "tue"),
        ("wednesday", "wed"),
        ("thursday", "thurs", "thur", "thu"),
        ("friday", "fri"),
        ("saturday", "sat"),
        ("sunday", "sun"),
    ]
):
    for _name in _names:
        WEEKDAYS[_name] = _index

MONTHS: dict[str, int] = {}
for _index, _names in enumerate(
    [
        ("january", "jan"),
        ("february", "feb"),
        ("march", "mar"),
        ("april", "apr"),
        ("may",),
        ("june", "jun"),
        ("july", "jul"),
        ("august", "aug"),
        ("september", "sept", "sep"),
        ("october", "oct"),
        ("november", "nov"),
        ("december", "dec"),
    ],
    start=1,
):
    for _name in _names:
        MONTHS[_name] = _index

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEEKDAY_ABBR = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

_WD = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_MON = "|".join(sorted(MONTHS, key=len, reverse=True))

MIN_YEAR, MAX_YEAR = 1970, 2999

_ON = re.compile(rf"on{SP}(?=\S)", re.I)
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(rf"(?P<y>\d{{4}})-(?P<m>\d{{1,2}})-(?P<d>\d{{1,2}}){BOUND}")),
    ("dotted", re.compile(rf"(?P<d>\d{{1,2}})\.(?P<m>\d{{1,2}})\.(?P<y>\d{{4}}|\d\d)?{BOUND}")),
    (
        "named",
        re.compile(
            rf"(?:(?P<wd>{_WD})\.?,?{SP})?(?P<d>\d{{1,2}})\.?{SP}(?P<mon>{_MON})\.?"
            rf"(?:,?{SP}(?P<y>\d{{4}}))?{BOUND}",
            re.I,
        ),
    ),
    (
        "us",
        re.compile(
            rf"(?:(?P<wd>{_WD})\.?,?{SP})?(?P<mon>{_MON})\.?{SP}(?P<d>\d{{1,2}})"
            rf"(?:,?{SP}(?P<y>\d{{4}}))?{BOUND}",
            re.I,
        ),
    ),
    ("relative", re.compile(rf"(?P<rel>today|yesterday){BOUND}", re.I)),
    ("weekday", re.compile(rf"(?:(?P<last>last){SP})?(?P<wd>{_WD})\.?{BOUND}", re.I)),
]


def _make(year: int, month: int, day: int, pos: int, token: str) -> date:
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise Problem(
            f"The year must be between {MIN_YEAR} and {MAX_YEAR}",
            pos,
            token,
            "Write e.g. 2026-03-15.",
        )
    try:
        return date(year, month, day)
    except ValueError:
        month_name = MONTH_ABBR[month - 1] if 1 <= month <= 12 else f"month {month}"
        raise Problem(
            f"There is no day {day} in {month_name}" if 1 <= month <= 12 else "No such month",
            pos,
            token,
            "Write e.g. 15.03., 15.03.2026 or 2026-03-15.",
        ) from None


def _without_year(month: int, day: int, today: date, pos: int, token: str) -> date:
    """The most recent such day on or before today."""
    _make(2000, month, day, pos, token)  # a leap year: is the day valid at all?
    for year in range(today.year, today.year - 9, -1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    raise Problem("No such date", pos, token)  # pragma: no cover - 29 Feb recurs within 8 years


def match_date(text: str, pos: int, endpos: int, today: date) -> tuple[int, date] | None:
    """The date starting at `pos` (optionally after "on"), with its end, or None.

    Weekday names mean the most recent such day (today included); "last <weekday>" the most
    recent one before today. Dates without a year mean the most recent such day.
    """
    on = _ON.match(text, pos, endpos)
    if on is not None:
        found = _match_bare_date(text, on.end(), endpos, today)
        if found is not None:
            return found
    return _match_bare_date(text, pos, endpos, today)


def _match_bare_date(text: str, pos: int, endpos: int, today: date) -> tuple[int, date] | None:
    for kind, pattern in _PATTERNS:
        m = pattern.match(text, pos, endpos)
        if m is None:
            continue
        token = m.group(0)
        if kind == "relative":
            return m.end(), today if m["rel"].lower() == "today" else today - timedelta(days=1)
        if kind == "weekday":
            weekday = WEEKDAYS[m["wd"].lower()]
            back = (today.weekday() - weekday) % 7
            if m["last"] and back == 0:
                back = 7
            return m.end(), today - timedelta(days=back)
        day = int(m["d"])
        month = int(m["m"]) if kind in ("iso", "dotted") else MONTHS[m["mon"].lower()]
        year_text = m["y"]
        if year_text is None:
            result = _without_year(month, day, today, pos, token)
        else:
            year = int(year_text) + (2000 if len(year_text) == 2 else 0)
            result = _make(year, month, day, pos, token)
        if kind in ("named", "us") and m["wd"]:
            stated = WEEKDAYS[m["wd"].lower()]
            if stated != result.weekday():
                raise Problem(
                    f"{format_day(result)[4:]} is a {WEEKDAY_NAMES[result.weekday()]},"
                    f" not a {WEEKDAY_NAMES[stated]}",
                    pos,
                    token,
                    "Leave the weekday out, or check the date.",
                )
        return m.end(), result
    return None


def format_day(day: date) -> str:
    """Mon 16 Mar 2026."""
    return f"{WEEKDAY_ABBR[day.weekday()]} {day.day} {MONTH_ABBR[day.month - 1]} {day.year}"
