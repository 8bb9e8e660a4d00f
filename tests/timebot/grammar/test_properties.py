"""Property tests: generated entries read as meant, and the printed form reads back the same."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from timebot.grammar import ParsedEntry, ParseError, describe, describe_all, parse_entry
from timebot.grammar.dates import MONTH_ABBR, MONTHS, WEEKDAY_ABBR, WEEKDAYS
from timebot.grammar.entry import read_quoted
from timebot.grammar.render import format_target, quote

ZONES = ["Europe/Berlin", "America/New_York", "UTC", "Asia/Kolkata", "Australia/Lord_Howe"]
TODAY = date(2026, 3, 18)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: words that mean something next to other tokens ("3 may", "9-11 pm", "2 hours")
RESERVED = {
    *WEEKDAYS,
    *MONTHS,
    *"today yesterday on last am pm billable nonbillable wfh".split(),
    *"h hr hrs hour hours m min mins minute minutes d day days".split(),
}

free_words = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzäöüéß", min_size=1, max_size=8).filter(
        lambda w: w.lower() not in RESERVED
    ),
    min_size=1,
    max_size=4,
)
segment = st.text(
    alphabet=st.characters(
        codec="utf-8", categories=["L", "N", "P", "Zs"], exclude_characters="\n\r"
    ),
    min_size=1,
    max_size=12,
).filter(lambda s: s.strip() != "")
comment_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\n\r", exclude_categories=["Cs"]),
    min_size=1,
    max_size=30,
).filter(lambda s: s.strip() != "")


@dataclass
class Spec:
    """What a generated duration means."""

    minutes: int | None = None
    days: Decimal | None = None
    wall: tuple[int, int] | None = None


@dataclass
class Expected:
    """What a generated entry must read as."""

    spec: Spec
    day: date
    target: tuple[str, ...] | None
    billable: bool | None
    wfh: bool
    absence_words: tuple[str, ...]
    comment: str | None


@st.composite
def durations(draw: st.DrawFn) -> tuple[str, Spec]:
    kind = draw(st.sampled_from(["hm", "h", "m", "clock", "decimal", "bare", "days", "range"]))
    minutes = draw(st.integers(1, 24 * 60))
    hours, rest = divmod(minutes, 60)
    if kind == "days":
        days = draw(st.sampled_from(["0.25", "0.5", "0,5", "0.75", "1", "1.0"]))
        unit = draw(st.sampled_from(["d", "d", " day", " days"]))
        return days + unit, Spec(days=Decimal(days.replace(",", ".")))
    if kind == "range":
        start = draw(st.integers(0, 24 * 60 - 1))
        end = draw(st.integers(start + 1, 24 * 60))
        dash = draw(st.sampled_from(["-", "\u2013", " - ", "\u2014"]))
        text = f"{start // 60}:{start % 60:02d}{dash}{end // 60}:{end % 60:02d}"
        return text, Spec(wall=(start, end))
    if kind == "hm" and hours and rest:
        text = draw(
            st.sampled_from(
                [
                    f"{hours}h{rest}",
                    f"{hours}h{rest}m",
                    f"{hours}h {rest}m",
                    f"{hours} h {rest} min",
                ]
            )
        )
    elif kind == "h" and not rest:
        text = f"{hours}{draw(st.sampled_from(['h', 'H', ' hours', 'hrs']))}"
    elif kind == "clock" and hours < 100:
        text = f"{hours}:{rest:02d}"
    elif kind == "decimal" and minutes % 6 == 0:
        value = str(Decimal(minutes) / 60)
        text = value.replace(".", draw(st.sampled_from([".", ","]))) + "h"
    elif kind == "bare" and minutes % 6 == 0:
        text = str(Decimal(minutes) / 60)
    else:
        text = f"{minutes}{draw(st.sampled_from(['m', 'min', ' mins', ' minutes']))}"
    return text, Spec(minutes=minutes)


@st.composite
def dates(draw: st.DrawFn) -> tuple[str, date]:
    day = draw(st.dates(date(2020, 1, 1), date(2030, 12, 31)))
    weekday, month = WEEKDAY_ABBR[day.weekday()], MONTH_ABBR[day.month - 1]
    texts = [
        day.isoformat(),
        f"{day.day:02d}.{day.month:02d}.{day.year}",
        f"{day.day}.{day.month}.{day.year}",
        f"{weekday} {day.day} {month} {day.year}",
        f"{day.day} {month} {day.year}",
        f"{month} {day.day}, {day.year}",
    ]
    text = draw(st.sampled_from(texts))
    if draw(st.booleans()):
        text = "on " + text
    return text, day


@st.composite
def relative_dates(draw: st.DrawFn) -> tuple[str, date]:
    back = draw(st.integers(0, 6))
    day = TODAY - timedelta(days=back)
    if back == 0:
        text = draw(st.sampled_from(["today", "wed", "Wednesday"]))
    elif back == 1:
        text = draw(st.sampled_from(["yesterday", "tue", "last tuesday"]))
    else:
        name = [n for n, i in WEEKDAYS.items() if i == day.weekday()]
        text = draw(st.sampled_from(name))
        if draw(st.booleans()):
            text = "last " + text
    return text, day


@st.composite
def entries(draw: st.DrawFn) -> tuple[str, str, Expected]:
    """An entry's text, its zone, and what it must read as."""
    tz = draw(st.sampled_from(ZONES))
    duration_text, spec = draw(durations())
    parts: list[tuple[str, str]] = [("duration", duration_text)]
    day = TODAY
    if draw(st.booleans()):
        date_text, day = draw(st.one_of(dates(), relative_dates()))
        parts.append(("date", date_text))
    target = tuple(draw(st.lists(segment, min_size=1, max_size=3))) if draw(st.booleans()) else None
    if target is not None:
        parts.append(("target", format_target(target)))
    billable = draw(st.sampled_from([None, True, False]))
    if billable is not None:
        words = (
            ["$", "billable", "Billable"] if billable else ["!nb", "non-billable", "nonbillable"]
        )
        parts.append(("billable", draw(st.sampled_from(words))))
    wfh = draw(st.booleans())
    if wfh:
        parts.append(("wfh", draw(st.sampled_from(["#wfh", "wfh", "WFH"]))))
    words = draw(free_words) if draw(st.booleans()) else []
    if words:
        parts.append(("free", " ".join(words)))
    quoted = draw(comment_text) if draw(st.booleans()) else None
    if quoted is not None:
        parts.append(("quoted", quote(quoted)))
    order = draw(st.permutations(parts))
    separators = draw(st.lists(st.sampled_from([" ", "  ", " \u00b7 ", "\t"]), min_size=len(order)))
    text = "".join(sep + part for sep, (_, part) in zip(separators, order, strict=False))

    comment_parts = [
        part if kind == "free" else " ".join((quoted or "").split())
        for kind, part in order
        if (kind == "free" and target is not None) or kind == "quoted"
    ]
    expected = Expected(
        spec=spec,
        day=day,
        target=target,
        billable=billable,
        wfh=wfh,
        absence_words=() if target is not None else tuple(words),
        comment=" ".join(" ".join(comment_parts).split()) or None,
    )
    return text, tz, expected


def local_ms(day: date, minute: int, tz: str) -> int | None:
    """UTC ms of a wall-clock minute, or None if the clocks skip it."""
    zone = ZoneInfo(tz)
    moment = datetime.combine(day, time(0), zone) + timedelta(minutes=minute)
    if minute < 24 * 60:
        moment = datetime.combine(day, time(minute // 60, minute % 60), zone)
        if moment.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != moment.replace(
            tzinfo=None
        ):
            return None
    else:
        moment = datetime.combine(day + timedelta(days=1), time(0), zone)
    return (moment.astimezone(UTC) - EPOCH) // timedelta(milliseconds=1)


@settings(max_examples=400, deadline=None)
@given(entries())
def test_a_generated_entry_reads_as_meant_and_prints_back_the_same(
    case: tuple[str, str, Expected],
) -> None:
    text, tz, expected = case
    day, wall = expected.day, expected.spec.wall
    if wall is not None:
        start_ms, end_ms = local_ms(day, wall[0], tz), local_ms(day, wall[1], tz)
        assume(start_ms is not None and end_ms is not None)  # the skipped hour: see test_dst
    result = parse_entry(text, tz, TODAY)
    assert isinstance(result, list), f"{text!r}: {result}"
    [entry] = result
    assert entry.day == day
    assert entry.target == expected.target
    assert entry.billable == expected.billable
    assert entry.wfh == expected.wfh
    assert entry.absence_words == expected.absence_words
    assert entry.comment == expected.comment
    assert entry.days == expected.spec.days
    if wall is not None:
        assert start_ms is not None and end_ms is not None
        assert entry.start_ms == start_ms
        assert entry.duration_ms == end_ms - start_ms
    else:
        assert entry.start is None
        assert entry.start_ms == local_ms(day, 0, tz)
        minutes = expected.spec.minutes
        assert entry.duration_ms == (None if minutes is None else minutes * 60_000)

    printed = describe(entry)
    assert parse_entry(printed, tz, date(2040, 1, 1)) == [entry], printed
    assert describe(entry) == printed


#: pieces to build arbitrary texts from: grammar tokens, near misses and noise
PIECES = [
    *"2h 2h30 90m 1.5h 1,5h 1:30 2 24 25 0 1d 0.5d 2d 9-11 9:00-11:30 9am-1pm 1-3pm".split(),
    *"13:00\u201317:00 22:00-0:00 8-12 (4h) (3h) 9- 2x 3rd 31.02. 15.03. 15.03.2026".split(),
    *"2026-03-29 2026-10-25 today yesterday mon friday last on Mar 16 2026 Tue".split(),
    *'@acme @acme/website @"Acme Corp"/x @ @a/ $ !nb billable non-billable #wfh wfh'.split(),
    *'“quoted” “unclosed "x" « » „ \\ , · ; \n - 3 hours h m am pm fix the header'.split(),
    "\n",
    ";",
    " ",
    "·",
    ",",
]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=14).map(
        lambda pieces: " ".join(pieces)
    ),
    st.sampled_from(ZONES),
    st.dates(date(2020, 1, 1), date(2030, 12, 31)),
)
# Found by this test: the words "Mar" and "0" read back side by side, after the date.
@example("Mar 2h 0", "Europe/Berlin", date(2020, 1, 1))
def test_any_text_reads_or_says_where_it_stopped(text: str, tz: str, today: date) -> None:
    result = parse_entry(text, tz, today)
    if isinstance(result, ParseError):
        assert 0 <= result.position <= len(text)
        assert text[result.position :].startswith(result.token)
        assert result.message
        return
    for entry in result:
        assert_round_trip(entry, tz)
    if result:
        assert parse_entry(describe_all(result), tz, today) == result


def assert_round_trip(entry: ParsedEntry, tz: str) -> None:
    assert (entry.duration_ms is None) != (entry.days is None)
    printed = describe(entry)
    assert parse_entry(printed, tz, entry.day) == [entry], printed


QUOTE_HEAVY = st.text(alphabet=st.sampled_from(["\\", '"', "“", "”", "«", "»", "„", "a", " ", ";"]))


@settings(max_examples=300, deadline=None)
@given(QUOTE_HEAVY, QUOTE_HEAVY)
def test_quoted_text_reads_back_exactly(text: str, other: str) -> None:
    printed = quote(text)
    assert read_quoted(printed, 0) == (len(printed), text)
    target = (text if text.strip() else "x", other if other.strip() else "y")
    entries = parse_entry(f"1h @acme/x {printed} ; 2h {format_target(target)}", "UTC", TODAY)
    assert isinstance(entries, list), entries
    assert entries[0].comment == (" ".join(text.split()) or None)
    assert entries[1].target == target
