"""The resolution of a time entry's rate and the exact amounts (pure rules, no server)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from service.calendar_periods import report_days
from service.rates.rate_amounts import PricedEntry, fee_window, summarise
from service.rates.rules import (
    ORGANISATIONS,
    PERSONS,
    PROJECTS,
    TAGS,
    Entry,
    Place,
    RateBook,
    RateFacts,
    SplitRow,
    resolve,
)

D0 = date(2026, 1, 1)
D1 = date(2026, 3, 1)


def rate(rid: str, value: int, method: str = "hourly", start: date = D0, **kw: object) -> RateFacts:
    return RateFacts(rid, start, method, value, "EUR", **kw)  # type: ignore[arg-type]


# Structure: org O; projects top > sub > leaf, other; tags: teamT (parent of subT), clientT;
# person ann tagged subT, person bob untagged; project sub tagged clientT.
PARENTS = {"top": None, "sub": "top", "leaf": "sub", "other": None}
TAG_PARENTS = {"teamT": None, "subT": "teamT", "clientT": None}


def book(since: dict[tuple[str, str], date] | None = None,
         **places: list[RateFacts]) -> RateBook:
    where = {
        "org": Place(ORGANISATIONS, "O"), "top": Place(PROJECTS, "top"),
        "sub": Place(PROJECTS, "sub"), "leaf": Place(PROJECTS, "leaf"),
        "other": Place(PROJECTS, "other"), "ann": Place(PERSONS, "ann"),
        "bob": Place(PERSONS, "bob"), "teamT": Place(TAGS, "teamT"),
        "subT": Place(TAGS, "subT"), "clientT": Place(TAGS, "clientT"),
    }
    return RateBook(
        organisation_id="O",
        rates={where[k]: v for k, v in places.items()},
        project_parents=PARENTS,
        tag_parents=TAG_PARENTS,
        project_tags={"sub": ["clientT"]},
        person_tags={"ann": ["subT"]},
        tag_since=since or {},
    )


SPLIT_P = rate("splitP", 100, split_type="persons", splits={"ann": SplitRow(150, "EUR")})
SPLIT_NB = rate("splitNB", 100, split_type="persons",
                splits={"ann": SplitRow(150, "EUR", non_billable=True)})
SPLIT_PR = rate("splitPr", 70, split_type="projects", splits={"sub": SplitRow(90, "EUR")})
SPLIT_T = rate("splitT", 60, split_type="tags", splits={"teamT": SplitRow(65, "EUR")})

# (case, rates by place, entry person, entry projects, entry day, expected (rate id, value,
# non-billable) or None)
CASES = [
    ("nothing anywhere", {}, "ann", ["leaf"], D1, None),
    ("organisation only", {"org": [rate("o", 10)]}, "ann", ["leaf"], D1, ("o", 10, False)),
    ("no project: person", {"ann": [rate("a", 20)], "org": [rate("o", 10)]}, "ann", [], D1,
     ("a", 20, False)),
    ("person beats organisation", {"ann": [rate("a", 20)], "org": [rate("o", 10)]},
     "ann", ["leaf"], D1, ("a", 20, False)),
    ("project beats person", {"top": [rate("t", 30)], "ann": [rate("a", 20)]},
     "ann", ["leaf"], D1, ("t", 30, False)),
    ("deepest project first", {"top": [rate("t", 30)], "leaf": [rate("l", 40)]},
     "ann", ["leaf"], D1, ("l", 40, False)),
    ("walks up to the parent", {"top": [rate("t", 30)], "sub": [rate("s", 35)]},
     "ann", ["leaf"], D1, ("s", 35, False)),
    ("project tag counts as the project's", {"clientT": [rate("c", 45)], "top": [rate("t", 30)]},
     "ann", ["leaf"], D1, ("c", 45, False)),
    ("project itself beats its tag", {"clientT": [rate("c", 45)], "sub": [rate("s", 35)]},
     "ann", ["sub"], D1, ("s", 35, False)),
    ("person tag counts as the person's", {"subT": [rate("st", 25)], "org": [rate("o", 10)]},
     "ann", ["other"], D1, ("st", 25, False)),
    ("person tag's parent tag", {"teamT": [rate("tt", 22)]}, "ann", [], D1, ("tt", 22, False)),
    ("person beats their tag", {"teamT": [rate("tt", 22)], "ann": [rate("a", 20)]},
     "ann", [], D1, ("a", 20, False)),
    ("untagged person falls to org", {"teamT": [rate("tt", 22)], "org": [rate("o", 10)]},
     "bob", [], D1, ("o", 10, False)),
    ("deepest of two projects", {"other": [rate("x", 5)], "leaf": [rate("l", 40)]},
     "ann", ["other", "leaf"], D1, ("l", 40, False)),
    ("From date: the later rate", {"org": [rate("o1", 10), rate("o2", 11, start=D1)]},
     "ann", [], D1, ("o2", 11, False)),
    ("From date: before it the earlier", {"org": [rate("o1", 10), rate("o2", 11, start=D1)]},
     "ann", [], date(2026, 2, 28), ("o1", 10, False)),
    ("future-only place passed over", {"leaf": [rate("l", 40, start=D1)], "ann": [rate("a", 20)]},
     "ann", ["leaf"], D0, ("a", 20, False)),
    ("non-billable method", {"top": [rate("nb", 0, method="nonBillable")], "ann": [rate("a", 20)]},
     "ann", ["top"], D1, ("nb", 0, True)),
    ("project split by persons: the person's row", {"top": [SPLIT_P]}, "ann", ["top"], D1,
     ("splitP", 150, False)),
    ("project split by persons: no row", {"top": [SPLIT_P]}, "bob", ["top"], D1,
     ("splitP", 100, False)),
    ("split row non-billable", {"org": [SPLIT_NB]}, "ann", [], D1, ("splitNB", 0, True)),
    ("person split by projects: the project's row", {"ann": [SPLIT_PR]}, "ann", ["leaf"], D1,
     ("splitPr", 90, False)),
    ("person split by projects: no row", {"ann": [SPLIT_PR]}, "ann", ["other"], D1,
     ("splitPr", 70, False)),
    ("tag rate split by persons", {"clientT": [
        rate("cs", 50, split_type="persons", splits={"bob": SplitRow(55, "EUR")})]},
     "bob", ["sub"], D1, ("cs", 55, False)),
    ("split by tags: the person's tag ancestor", {"top": [SPLIT_T]}, "ann", ["top"], D1,
     ("splitT", 65, False)),
    ("split ignored on a fixed fee", {"top": [rate("f", 900, method="fixed", split_type="persons",
                                                    splits={"ann": SplitRow(1, "EUR")})]},
     "ann", ["top"], D1, ("f", 900, False)),
]


@pytest.mark.parametrize(
    ("places", "person", "projects", "day", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_resolution(
    places: dict[str, list[RateFacts]],
    person: str,
    projects: list[str],
    day: date,
    expected: tuple[str, int, bool] | None,
) -> None:
    found = resolve(book(**places), Entry(day, person, projects))
    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert (found.rate.id, found.value, found.non_billable) == expected


def priced(group: str, day: date, ms: int, billing: RateFacts | None, cost: RateFacts | None = None,
           person: str = "ann", non_billable: bool = False, start: int = 0) -> PricedEntry:
    b = book(org=[billing]) if billing else None
    c = book(org=[cost]) if cost else None
    entry = Entry(day, person, [])
    return PricedEntry(
        group, person, day, start, ms, non_billable,
        resolve(b, entry) if b else None, resolve(c, entry) if c else None,
    )


def test_a_tagging_applies_from_its_start_day() -> None:
    rates = book({("ann", "subT"): D1}, teamT=[rate("tt", 22)], org=[rate("o", 10)])
    before = resolve(rates, Entry(date(2026, 2, 28), "ann", []))
    after = resolve(rates, Entry(D1, "ann", []))
    assert before is not None and before.rate.id == "o"
    assert after is not None and after.rate.id == "tt"


def test_exact_sums_daily_once_per_day_and_fixed_once_per_window() -> None:
    hourly = rate("h", 10001)  # 100.01 EUR an hour
    third = 1_200_000  # 20 minutes
    rows = summarise([priced("a", D1, third, hourly, start=i) for i in range(3)], "EUR").rows
    assert rows["a"].hourly_billing == Decimal(10001)  # exact, not 10000.999…
    assert rows["a"].hours == 1

    daily = rate("d", 50000, method="daily")
    entries = [priced("a", D1, 3_600_000, daily, start=1), priced("b", D1, 3_600_000, daily,
               start=2), priced("a", date(2026, 3, 2), 3_600_000, daily, start=3)]
    rows = summarise(entries, "EUR").rows
    assert rows["a"].daily_billing == 100000 and rows["b"].daily_billing == 0

    fee = rate("f", 7000, method="fixed", repeat_enabled=True, repeat_occurrence="month",
               repeat_frequency=1, repeat_end_day=date(2026, 4, 15))
    days = [date(2026, 1, 5), date(2026, 1, 20), date(2026, 2, 1), date(2026, 4, 10),
            date(2026, 5, 2)]
    rows = summarise([priced("a", d, 1, fee, start=i) for i, d in enumerate(days)], "EUR").rows
    assert rows["a"].fixed_billing == 7000 * 3  # January, February, April; May is past the end


def test_margin_billable_and_other_currencies() -> None:
    bill = rate("b", 10000)
    cost = rate("c", 6000)
    usd = RateFacts("u", D0, "hourly", 999, "USD")
    entries = [
        priced("a", D1, 3_600_000, bill, cost, start=1),
        priced("a", D1, 3_600_000, bill, cost, non_billable=True, start=2),
        priced("a", D1, 3_600_000, usd, start=3),
    ]
    report = summarise(entries, "EUR")
    totals = report.rows["a"]
    assert totals.billing == 10000 and totals.cost == 12000 and totals.margin == -2000
    assert totals.billable_hours == 2 and totals.billable_percentage == 67
    assert totals.margin_percent == -20
    assert report.other_currencies == {"USD"}


@pytest.mark.parametrize(
    ("occurrence", "every", "day", "window"),
    [("day", 2, date(2026, 1, 4), 1), ("week", 1, date(2026, 1, 14), 1),
     ("month", 3, date(2026, 4, 1), 1), ("month", 1, date(2026, 1, 31), 0),
     ("year", 1, date(2027, 1, 1), 1), ("year", 1, date(2025, 12, 31), None)],
)
def test_fee_windows(occurrence: str, every: int, day: date, window: int | None) -> None:
    fee = rate("f", 1, method="fixed", repeat_enabled=True, repeat_occurrence=occurrence,
               repeat_frequency=every)
    assert fee_window(fee, day) == window


@pytest.mark.parametrize(
    ("target", "period", "first", "after"),
    [("current", "week", date(2026, 3, 16), date(2026, 3, 23)),
     ("previous", "month", date(2026, 2, 1), date(2026, 3, 1)),
     ("next", "quarter", date(2026, 4, 1), date(2026, 7, 1)),
     ("current", "semiMonth", date(2026, 3, 16), date(2026, 4, 1)),
     ("previous", "semiMonth", date(2026, 3, 1), date(2026, 3, 16)),
     ("current", "biWeekly", date(2026, 3, 16), date(2026, 3, 30)),  # week 2932 from 1970-01-05
     ("current", "day", date(2026, 3, 18), date(2026, 3, 19)),
     ("previous", "year", date(2025, 1, 1), date(2026, 1, 1)),
     ("yearToDay", None, date(2026, 1, 1), date(2026, 3, 19)),
     ("last12Months", None, date(2025, 3, 19), date(2026, 3, 19))],
)
def test_report_periods(target: str, period: str | None, first: date, after: date) -> None:
    assert report_days(target, period, date(2026, 3, 18)) == (first, after)  # a Wednesday
