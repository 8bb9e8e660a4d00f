"""The fields of a reading, and of an error, beyond the printed form of the table."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest

from timebot.grammar import ParsedEntry, ParseError, describe, parse_entry

TODAY = date(2026, 3, 18)
BERLIN = ZoneInfo("Europe/Berlin")


def read(text: str, tz: str = "Europe/Berlin") -> list[ParsedEntry]:
    result = parse_entry(text, tz, TODAY)
    assert isinstance(result, list), result
    return result


def error(text: str) -> ParseError:
    result = parse_entry(text, "Europe/Berlin", TODAY)
    assert isinstance(result, ParseError), result
    return result


def test_the_example_of_the_issue() -> None:
    [entry] = read("2h 30m @acme/website $ #wfh fixing the header")
    assert entry == ParsedEntry(
        day=TODAY,
        duration_ms=9_000_000,
        days=None,
        start=None,
        end=None,
        start_ms=int(datetime(2026, 3, 17, 23, 0, tzinfo=UTC).timestamp()) * 1000,
        target=("acme", "website"),
        absence_words=(),
        wfh=True,
        billable=True,
        comment="fixing the header",
    )
    assert describe(entry) == (
        "2h 30m on Wed 18 Mar 2026 · @acme/website · billable · wfh · “fixing the header”"
    )


def test_a_range_keeps_its_start_and_end_in_the_zone() -> None:
    [entry] = read("9:00-11:30 yesterday @acme")
    assert entry.start == datetime(2026, 3, 17, 9, 0, tzinfo=BERLIN)
    assert entry.end == datetime(2026, 3, 17, 11, 30, tzinfo=BERLIN)
    assert entry.start is not None and entry.start.tzinfo == BERLIN
    assert entry.start_ms == int(datetime(2026, 3, 17, 8, 0, tzinfo=UTC).timestamp()) * 1000
    assert entry.duration_ms == 9_000_000
    assert entry.is_range


def test_a_range_to_midnight_ends_on_the_next_day() -> None:
    [entry] = read("22:00-24:00 @a")
    assert entry.end == datetime(2026, 3, 19, 0, 0, tzinfo=BERLIN)
    assert entry.day == TODAY


def test_days_keep_their_unit() -> None:
    [entry] = read("0.5d vacation friday")
    assert entry.duration_ms is None
    assert entry.days == Decimal("0.5")
    assert entry.absence_words == ("vacation",)
    assert entry.target is None
    assert entry.day == date(2026, 3, 13)
    assert not entry.is_range


def test_without_a_project_the_words_are_the_absence_and_the_quotes_the_comment() -> None:
    [entry] = read("1d sick leave “flu”")
    assert entry.absence_words == ("sick", "leave")
    assert entry.comment == "flu"
    [entry] = read("1d @acme sick leave “flu”")
    assert entry.absence_words == ()
    assert entry.comment == "sick leave flu"


def test_each_entry_knows_where_it_stands() -> None:
    text = "2h @a fix;  3h @b\n1h @c"
    entries = read(text)
    assert [text[a:b] for a, b in (e.span for e in entries)] == ["2h @a fix", "3h @b", "1h @c"]


def test_an_error_says_what_where_and_how() -> None:
    problem = error("2h @a; 1h @b; 3x @c")
    assert problem.position == 14
    assert problem.token == "3x"
    assert problem.entry_index == 2
    assert "2h" in problem.hint
    assert str(problem) == (
        "I could not read this: “3x” at character 15. Durations look like 2h, 2h30, 90m, 1.5h"
        " or 1:30; put the comment in quotes if this is part of it."
    )


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("9-", "A range needs an end time"),
        ("9am @a", "A time of day needs an end"),
        ("2h 15.03.x", "Write a date like 15.03."),
        ("2h 9-1x", "Write a range like 9:00-11:30"),
        ("25", "Write 25m for minutes"),
        ("@acme", "Start with a duration"),
        ("2h @a $ !nb", "keep one of the two"),
        ("2h @a @b", "separate entries with ;"),
        ("2h 3h", "The duration is “2h”"),
    ],
)
def test_every_error_has_a_hint(text: str, hint: str) -> None:
    assert hint in error(text).hint


def test_nothing_to_read_is_no_entry() -> None:
    assert read("") == []
    assert read(" ;\n ; ") == []


def test_an_unknown_zone_is_the_callers_mistake() -> None:
    with pytest.raises(ZoneInfoNotFoundError):
        parse_entry("2h", "Europe/Nowhere", TODAY)
