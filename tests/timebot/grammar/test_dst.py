"""Daylight-saving days in Europe/Berlin and America/New_York (2026).

Berlin: clocks go forward on Sun 29 Mar (2:00 → 3:00) and back on Sun 25 Oct (3:00 → 2:00).
New York: forward on Sun 8 Mar (2:00 → 3:00), back on Sun 1 Nov (2:00 → 1:00).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from timebot.grammar import ParsedEntry, ParseError, describe, parse_entry

TODAY = date(2026, 11, 20)
HOUR = 3_600_000
MINUTE = 60_000


def utc_ms(year: int, month: int, day: int, hour: int, minute: int) -> int:
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()) * 1000


def one(text: str, tz: str) -> ParsedEntry:
    result = parse_entry(text, tz, TODAY)
    assert isinstance(result, list), result
    [entry] = result
    assert parse_entry(describe(entry), tz, TODAY) == [entry]
    return entry


CASES = [
    # text, zone, real duration, start (UTC)
    # spring forward: the hour 2:00-3:00 does not happen
    ("1:00-4:00 2026-03-29", "Europe/Berlin", 2 * HOUR, utc_ms(2026, 3, 29, 0, 0)),
    ("1:30-3:30 2026-03-29", "Europe/Berlin", 1 * HOUR, utc_ms(2026, 3, 29, 0, 30)),
    ("0:00-24:00 2026-03-29", "Europe/Berlin", 23 * HOUR, utc_ms(2026, 3, 28, 23, 0)),
    ("3:00-5:00 2026-03-29", "Europe/Berlin", 2 * HOUR, utc_ms(2026, 3, 29, 1, 0)),
    ("1:00-4:00 2026-03-08", "America/New_York", 2 * HOUR, utc_ms(2026, 3, 8, 6, 0)),
    ("1:45-3:15 2026-03-08", "America/New_York", 30 * MINUTE, utc_ms(2026, 3, 8, 6, 45)),
    ("0:00-24:00 2026-03-08", "America/New_York", 23 * HOUR, utc_ms(2026, 3, 8, 5, 0)),
    ("9am-5pm 2026-03-08", "America/New_York", 8 * HOUR, utc_ms(2026, 3, 8, 13, 0)),
    # fall back: the hour before the change happens twice; a time in it is its first occurrence
    ("1:00-4:00 2026-10-25", "Europe/Berlin", 4 * HOUR, utc_ms(2026, 10, 24, 23, 0)),
    ("2:30-2:45 2026-10-25", "Europe/Berlin", 15 * MINUTE, utc_ms(2026, 10, 25, 0, 30)),
    ("2:30-3:00 2026-10-25", "Europe/Berlin", 90 * MINUTE, utc_ms(2026, 10, 25, 0, 30)),
    ("0:00-24:00 2026-10-25", "Europe/Berlin", 25 * HOUR, utc_ms(2026, 10, 24, 22, 0)),
    (
        "0:30-3:00 2026-11-01",
        "America/New_York",
        3 * HOUR + 30 * MINUTE,
        utc_ms(2026, 11, 1, 4, 30),
    ),
    ("1:30-2:00 2026-11-01", "America/New_York", 90 * MINUTE, utc_ms(2026, 11, 1, 5, 30)),
    ("0:00-24:00 2026-11-01", "America/New_York", 25 * HOUR, utc_ms(2026, 11, 1, 4, 0)),
    ("22:00-24:00 2026-11-01", "America/New_York", 2 * HOUR, utc_ms(2026, 11, 2, 3, 0)),
    # an ordinary day on either side, for contrast
    ("9-17 2026-03-28", "Europe/Berlin", 8 * HOUR, utc_ms(2026, 3, 28, 8, 0)),
    ("9-17 2026-03-30", "Europe/Berlin", 8 * HOUR, utc_ms(2026, 3, 30, 7, 0)),
    ("9-17 2026-11-02", "America/New_York", 8 * HOUR, utc_ms(2026, 11, 2, 14, 0)),
    ("9-17 2026-10-31", "America/New_York", 8 * HOUR, utc_ms(2026, 10, 31, 13, 0)),
]


@pytest.mark.parametrize(("text", "tz", "duration_ms", "start_ms"), CASES)
def test_a_range_counts_the_real_elapsed_time(
    text: str, tz: str, duration_ms: int, start_ms: int
) -> None:
    entry = one(text, tz)
    assert entry.duration_ms == duration_ms
    assert entry.start_ms == start_ms
    assert entry.start is not None and entry.end is not None
    real = entry.end.astimezone(UTC) - entry.start.astimezone(UTC)
    assert real == timedelta(milliseconds=duration_ms)
    assert str(entry.start.tzinfo) == tz


@pytest.mark.parametrize(
    ("text", "tz", "start_ms"),
    [
        ("8h 2026-03-29", "Europe/Berlin", utc_ms(2026, 3, 28, 23, 0)),
        ("8h 2026-03-30", "Europe/Berlin", utc_ms(2026, 3, 29, 22, 0)),
        ("8h 2026-10-25", "Europe/Berlin", utc_ms(2026, 10, 24, 22, 0)),
        ("8h 2026-10-26", "Europe/Berlin", utc_ms(2026, 10, 25, 23, 0)),
        ("8h 2026-03-08", "America/New_York", utc_ms(2026, 3, 8, 5, 0)),
        ("8h 2026-03-09", "America/New_York", utc_ms(2026, 3, 9, 4, 0)),
        ("8h 2026-11-01", "America/New_York", utc_ms(2026, 11, 1, 4, 0)),
        ("8h 2026-11-02", "America/New_York", utc_ms(2026, 11, 2, 5, 0)),
    ],
)
def test_a_duration_starts_at_the_local_midnight(text: str, tz: str, start_ms: int) -> None:
    entry = one(text, tz)
    assert entry.duration_ms == 8 * HOUR
    assert entry.start_ms == start_ms
    assert entry.start is None and entry.end is None


@pytest.mark.parametrize(
    ("text", "tz", "message"),
    [
        ("2:30-4:00 2026-03-29", "Europe/Berlin", "2:30 does not exist on Sun 29 Mar 2026"),
        ("2:00-4:00 2026-03-29", "Europe/Berlin", "2:00 does not exist on Sun 29 Mar 2026"),
        ("1:00-2:15 2026-03-29", "Europe/Berlin", "2:15 does not exist on Sun 29 Mar 2026"),
        ("2:00-2:59 2026-03-08", "America/New_York", "2:00 does not exist on Sun 8 Mar 2026"),
        ("1am-2:30am 2026-03-08", "America/New_York", "2:30 does not exist on Sun 8 Mar 2026"),
    ],
)
def test_a_range_in_the_skipped_hour_is_an_error(text: str, tz: str, message: str) -> None:
    result = parse_entry(f"@acme {text}", tz, TODAY)
    assert isinstance(result, ParseError)
    assert result.message.startswith(message)
    assert tz in result.message
    assert result.position == 6
    assert result.token == text.split()[0]


def test_the_same_range_is_fine_the_day_before_and_in_another_zone() -> None:
    assert one("2:30-4:00 2026-03-28", "Europe/Berlin").duration_ms == 90 * MINUTE
    assert one("2:30-4:00 2026-03-29", "America/New_York").duration_ms == 90 * MINUTE
    assert one("2:30-4:00 2026-03-29", "UTC").duration_ms == 90 * MINUTE


def test_the_stated_length_of_a_range_must_be_the_real_one() -> None:
    assert one("1:00-4:00 (2h) 2026-03-29", "Europe/Berlin").duration_ms == 2 * HOUR
    result = parse_entry("1:00-4:00 (3h) 2026-03-29", "Europe/Berlin", TODAY)
    assert isinstance(result, ParseError)
    assert result.message == "This range lasts 2h, not 3h"
    entry = one("0:00-24:00 (25h) 2026-10-25", "Europe/Berlin")
    assert describe(entry) == "0:00\u201324:00 (25h) on Sun 25 Oct 2026"


def test_the_zone_may_be_given_as_a_zoneinfo() -> None:
    from zoneinfo import ZoneInfo

    by_name = parse_entry("1:00-4:00 2026-03-29", "Europe/Berlin", TODAY)
    by_zone = parse_entry("1:00-4:00 2026-03-29", ZoneInfo("Europe/Berlin"), TODAY)
    assert by_name == by_zone
