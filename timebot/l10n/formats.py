"""Dates, times, numbers and durations as one person reads them (pure; Babel's CLDR data
gives the names of days and months and each language's own numbers).

With nothing chosen (`Localisation` fields None) each keeps timebot's house style, the one
English output has always had: ISO dates, `Mon 02 Mar`, 24-hour clock, `7h 30m`."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel import dates as babel_dates
from babel import numbers as babel_numbers

from timebot.l10n.settings import ENGLISH, Localisation
from timebot.l10n.texts import N_, translate

_DATE_PATTERNS = {"YYYY-MM-DD": "%Y-%m-%d", "DD/MM/YYYY": "%d/%m/%Y", "MM/DD/YYYY": "%m/%d/%Y",
                  "DD.MM.YYYY": "%d.%m.%Y", "DD-MM-YYYY": "%d-%m-%Y"}


def zone_of(local: Localisation) -> ZoneInfo:
    try:
        return ZoneInfo(local.time_zone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def format_date(day: date, local: Localisation = ENGLISH) -> str:
    """`16/11/2026` in the chosen date format; ISO (`2026-11-16`) when none was chosen."""
    return day.strftime(_DATE_PATTERNS.get(local.date_format or "", "%Y-%m-%d"))


def format_day(day: date, local: Localisation = ENGLISH, *, year: bool = False) -> str:
    """A day with its weekday: `Mon 02 Mar` (`lun. 02 nov.` in French); with a chosen date
    format, the weekday and the date in it (`lun. 16/11/2026`)."""
    weekday = babel_dates.format_date(day, "EEE", locale=local.lang)
    if local.date_format:
        return f"{weekday} {format_date(day, local)}"
    return babel_dates.format_date(day, "EEE dd MMM y" if year else "EEE dd MMM",
                                   locale=local.lang)


def format_entry_day(day: date, local: Localisation = ENGLISH) -> str:
    """A day as quick time entry names it: `Mon 2 Mar 2026` (the grammar's own words, which
    `/time` reads back); for a reader of another language or date format, `format_day` with
    the year (`lun. 02 mars 2026`, `lun. 02/03/2026`)."""
    if local.lang == "en" and not local.date_format:
        return babel_dates.format_date(day, "EEE d MMM y", locale="en")
    return format_day(day, local, year=True)


def _local_days(start_ms: int, end_ms: int, local: Localisation) -> tuple[date, date]:
    zone = zone_of(local)
    first = datetime.fromtimestamp(start_ms / 1000, UTC).astimezone(zone).date()
    last = datetime.fromtimestamp(max(start_ms, end_ms - 1) / 1000, UTC).astimezone(zone).date()
    return first, last


def format_period(start_ms: int, end_ms: int, local: Localisation = ENGLISH, *,
                  named: bool = True) -> str:
    """A period (end exclusive) in the person's time zone: `Mon 02 Mar to Sun 08 Mar 2026`,
    or with `named=False` `2026-03-02 to 2026-03-08` (each in the chosen date format)."""
    first, last = _local_days(start_ms, end_ms, local)
    if not named:
        if first == last:
            return format_date(first, local)
        return translate(local, N_("{first} to {last}")).format(
            first=format_date(first, local), last=format_date(last, local))
    if first == last:
        return format_day(first, local, year=True)
    return translate(local, N_("{first} to {last}")).format(
        first=format_day(first, local), last=format_day(last, local, year=True))


def format_time(moment: time | datetime, local: Localisation = ENGLISH) -> str:
    """`14:30`, or `2:30 PM` on a 12-hour clock (the language's own AM/PM)."""
    if local.time_format == 12:
        return babel_dates.format_time(moment, "h:mm a", locale=local.lang)
    return f"{moment:%H:%M}"


def format_datetime(ms: int, local: Localisation = ENGLISH) -> str:
    """`2026-11-16 14:30 UTC`: an instant in the person's zone, date format and clock."""
    moment = datetime.fromtimestamp(ms / 1000, UTC).astimezone(zone_of(local))
    return f"{format_date(moment.date(), local)} {format_time(moment, local)} {moment:%Z}"


def format_number(value: float, local: Localisation = ENGLISH, *, digits: int = 2,
                  fixed: bool = False) -> str:
    """`1 234,5`: the chosen separators; the language's own where none was chosen (`fixed`:
    always `digits` decimals, `1 234,50`)."""
    pattern = "#,##0." + ("0" if fixed else "#") * digits if digits else "#,##0"
    if local.decimal is None and local.thousands is None:
        return babel_numbers.format_decimal(value, format=pattern, locale=local.lang)
    plain = babel_numbers.format_decimal(value, format=pattern, locale="en")
    decimal = local.decimal or babel_numbers.get_decimal_symbol(local.lang)
    group = (local.thousands if local.thousands is not None
             else babel_numbers.get_group_symbol(local.lang))
    return "".join(group if c == "," else decimal if c == "." else c for c in plain)


def format_hours(value: float, local: Localisation = ENGLISH) -> str:
    """Hours with two decimals, as reports show them: `1234.50` (the house style), `1 234,50`
    in the chosen separators or the language's own."""
    if local.lang == "en" and local.decimal is None and local.thousands is None:
        return f"{value:.2f}"
    return format_number(value, local, digits=2, fixed=True)


def house_hours(ms: int) -> str:
    """`7h 30m`, `45m`, `0h`."""
    minutes = round(ms / 60_000)
    whole, rest = divmod(minutes, 60)
    if whole and rest:
        return f"{whole}h {rest:02d}m"
    return f"{whole}h" if whole or not rest else f"{rest}m"


def format_duration(ms: int, local: Localisation = ENGLISH) -> str:
    """In the chosen duration format: 0 `7:30`, 1 `7.5 h` (the person's decimal separator),
    2 `7h 30m`; none chosen: `7h 30m`."""
    if local.duration_format == 0:
        minutes = round(abs(ms) / 60_000)
        sign = "-" if ms < 0 else ""
        return f"{sign}{minutes // 60}:{minutes % 60:02d}"
    if local.duration_format == 1:
        number = format_number(round(ms / 3_600_000, 2), local)
        return translate(local, N_("{hours} h")).format(hours=number)
    return house_hours(ms)


def week_start(day: date, local: Localisation = ENGLISH) -> date:
    """The first day of the week holding `day` (firstDayOfWeek: 0 Sunday … 6 Saturday)."""
    first = (local.first_day - 1) % 7  # Python's weekday: Monday 0
    return day - timedelta(days=(day.weekday() - first) % 7)
