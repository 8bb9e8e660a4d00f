"""The time-off balance rules (service/absences/time_off_rules.py): examples per frequency and
award option, and properties over random calendars (the balance never drifts)."""

from __future__ import annotations

from datetime import date, timedelta
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from service.absences.time_off_rules import (
    DAY_OPTIONS,
    PERIODICITIES,
    Accrual,
    Allowance,
    award_dates,
    cycle_awards,
    ledger,
    overdraws,
)

YEAR_2026 = Allowance(start=date(2026, 1, 1), end=date(2027, 1, 1))


def monthly(awarded: str = "firstDay", quantity: int = 2, day: int = 1) -> Accrual:
    return Accrual(enabled=True, periodicity="monthly", period_start_day=day, awarded=awarded,
                   quantity=Fraction(quantity))


def test_award_days_per_option() -> None:
    lo, hi = date(2026, 1, 1), date(2026, 3, 1)
    assert award_dates(monthly("firstDay"), lo, hi) == [date(2026, 1, 1), date(2026, 2, 1)]
    assert award_dates(monthly("lastDay"), lo, hi) == [date(2026, 1, 31), date(2026, 2, 28)]
    assert award_dates(monthly("firstDayNextPeriod"), lo, hi) == [
        date(2026, 2, 1), date(2026, 3, 1)]


def test_every_frequency_awards_its_periods() -> None:
    lo, hi = date(2026, 1, 1), date(2027, 1, 1)
    counts = {}
    for periodicity in PERIODICITIES:
        accrual = Accrual(enabled=True, periodicity=periodicity, period_start_day=1,
                          quantity=Fraction(1))
        counts[periodicity] = len(award_dates(accrual, lo, hi))
    # 2026-01-01 is a Thursday: Mondays from 01-05; fortnights counted from 1970-01-05.
    assert counts == {"daily": 365, "weekly": 52, "biWeekly": 26, "semiMonthly": 24,
                      "monthly": 12, "quarterly": 4, "semiAnnually": 2, "annually": 1}
    semi = Accrual(enabled=True, periodicity="semiMonthly", period_start_day=15,
                   quantity=Fraction(1))
    assert award_dates(semi, date(2026, 2, 1), date(2026, 3, 1)) == [
        date(2026, 2, 15), date(2026, 2, 28)]
    weekly = Accrual(enabled=True, periodicity="weekly", period_start_day=3, awarded="lastDay",
                     quantity=Fraction(1))
    assert award_dates(weekly, date(2026, 1, 1), date(2026, 1, 15)) == [
        date(2026, 1, 13), date(2026, 1, 20)]


def test_balance_accrues_up_to_the_as_of_date_and_absences_count_at_once() -> None:
    absences = [(date(2026, 11, 2), Fraction(1)), (date(2026, 3, 3), Fraction(1, 2))]
    at_march = ledger(monthly(), YEAR_2026, absences, date(2026, 3, 15))
    assert at_march.balance == 6 - Fraction(3, 2)
    assert at_march.consumed == Fraction(3, 2)


def test_carry_forward_limit_and_forfeit() -> None:
    allowance = Allowance(start=date(2026, 1, 1), end=date(2027, 1, 1), available=Fraction(20),
                          carry_forward_limit=Fraction(5), recurrent=True)
    used = [(date(2026, 6, 1), Fraction(8))]
    book = ledger(Accrual(), allowance, used, date(2027, 2, 1))
    first, second = book.cycles
    assert (first.closing, first.carried_out, first.forfeited) == (12, 5, 7)
    assert second.carried_in == 5 and book.balance == 25
    default = Allowance(start=allowance.start, end=allowance.end, available=Fraction(20),
                        recurrent=True)
    assert ledger(Accrual(), default, used, date(2027, 2, 1)).balance == 20


def test_accrued_correction_and_negative_debt_carry_whole() -> None:
    allowance = Allowance(start=date(2026, 1, 1), end=date(2026, 7, 1), available=Fraction(3),
                          accrued_correction=Fraction(-1), allow_negative_balance=True,
                          recurrent=True)
    book = ledger(Accrual(), allowance, [(date(2026, 2, 2), Fraction(4))], date(2026, 8, 1))
    assert book.cycles[0].closing == -2 and book.cycles[0].forfeited == 0
    assert book.balance == 1


def test_overdraw_refused_unless_allowed_and_booking_ahead() -> None:
    allowance = Allowance(start=date(2026, 1, 1), end=date(2027, 1, 1))
    today = date(2026, 2, 10)
    take_five = [(date(2026, 2, 20), Fraction(5))]
    assert overdraws(monthly(), allowance, [], take_five, today, date(2026, 2, 20)) == -1
    ahead = Accrual(enabled=True, periodicity="monthly", quantity=Fraction(2),
                    allow_negative_booking=True)
    assert overdraws(ahead, allowance, [], take_five, today, date(2026, 2, 20)) is None
    allowed = Allowance(start=allowance.start, end=allowance.end, allow_negative_balance=True)
    assert overdraws(monthly(), allowed, [], take_five, today, date(2026, 2, 20)) is None
    # Already negative (the allowance was lowered): a change that does not lower it is fine.
    assert overdraws(monthly(), allowance, take_five, take_five, today, date(2026, 2, 20)) is None


def test_end_date_extension_lets_absences_count_after_the_end() -> None:
    allowance = Allowance(start=date(2026, 1, 1), end=date(2027, 1, 1), available=Fraction(10),
                          end_date_extension=date(2027, 4, 1))
    absences = [(date(2027, 3, 31), Fraction(1)), (date(2027, 4, 1), Fraction(1))]
    assert ledger(Accrual(), allowance, absences, date(2027, 5, 1)).balance == 9
    today = date(2027, 2, 1)
    assert overdraws(Accrual(), allowance, [], [(date(2027, 3, 2), Fraction(11))], today,
                     date(2027, 3, 2)) == -1
    assert overdraws(Accrual(), allowance, [], [(date(2027, 4, 2), Fraction(11))], today,
                     date(2027, 4, 2)) is None  # outside the allowance


def test_recurrent_award_after_a_cycle_goes_to_the_next_one() -> None:
    allowance = Allowance(start=date(2026, 1, 1), end=date(2027, 1, 1), recurrent=True,
                          carry_forward_limit=Fraction(100))
    book = ledger(monthly("firstDayNextPeriod"), allowance, [], date(2027, 1, 1))
    assert [cycle.awarded for cycle in book.cycles] == [22, 2]  # Feb..Dec, then 1 Jan 2027


# ---------------------------------------------------------------------------- properties

DAYS = st.integers(min_value=0, max_value=3 * 366)
BASE = date(2025, 1, 1)


@st.composite
def calendars(draw: st.DrawFn) -> tuple[Accrual, Allowance, list[tuple[date, Fraction]]]:
    periodicity = draw(st.sampled_from(PERIODICITIES))
    limit = 7 if periodicity in ("weekly", "biWeekly") else 15 if periodicity == "semiMonthly" \
        else 28
    accrual = Accrual(
        enabled=draw(st.booleans()),
        periodicity=periodicity,
        period_start_day=draw(st.integers(1, limit)),
        awarded=draw(st.sampled_from(DAY_OPTIONS)),
        quantity=Fraction(draw(st.integers(0, 40)), 4),
    )
    start = BASE + timedelta(days=draw(st.integers(0, 200)))
    length = draw(st.integers(1, 400))
    extension = draw(st.one_of(st.none(), st.integers(0, 120)))
    allowance = Allowance(
        start=start,
        end=start + timedelta(days=length),
        end_date_extension=(None if extension is None
                            else start + timedelta(days=length + extension)),
        available=Fraction(draw(st.integers(0, 30))),
        carry_forward_limit=Fraction(draw(st.integers(0, 10))),
        accrued_correction=Fraction(draw(st.integers(-5, 5))),
        allow_negative_balance=draw(st.booleans()),
        recurrent=draw(st.booleans()),
    )
    absences = [
        (BASE + timedelta(days=draw(DAYS)), Fraction(draw(st.integers(1, 8)), 8))
        for _ in range(draw(st.integers(0, 30)))
    ]
    return accrual, allowance, absences


@settings(max_examples=200, deadline=None)
@given(calendars(), DAYS)
def test_balance_never_drifts(
    calendar: tuple[Accrual, Allowance, list[tuple[date, Fraction]]], offset: int
) -> None:
    accrual, allowance, absences = calendar
    book = ledger(accrual, allowance, absences, BASE + timedelta(days=offset))
    correction = sum((cycle.correction for cycle in book.cycles), Fraction(0))
    assert book.balance == book.awarded + correction - book.consumed - book.forfeited
    for before, after in zip(book.cycles, book.cycles[1:], strict=False):
        assert before.carried_out == after.carried_in
        assert before.carried_out is not None
        if before.closing > 0:
            assert 0 <= before.carried_out <= allowance.carry_forward_limit
        assert before.forfeited >= 0
        assert before.end == after.start


@settings(max_examples=200, deadline=None)
@given(calendars(), DAYS, DAYS)
def test_computing_in_two_steps_equals_computing_at_once(
    calendar: tuple[Accrual, Allowance, list[tuple[date, Fraction]]], one: int, two: int
) -> None:
    """The ledger up to an earlier date is a prefix of the ledger up to a later one: the
    closed cycles are the same, and the open one only gains awards."""
    accrual, allowance, absences = calendar
    early, late = sorted((BASE + timedelta(days=one), BASE + timedelta(days=two)))
    first = ledger(accrual, allowance, absences, early)
    whole = ledger(accrual, allowance, absences, late)
    if not first.cycles:
        return
    closed = first.cycles[:-1]
    assert whole.cycles[: len(closed)] == closed
    opened, later = first.cycles[-1], whole.cycles[len(closed)]
    assert (opened.start, opened.carried_in, opened.consumed, opened.correction) == (
        later.start, later.carried_in, later.consumed, later.correction)
    assert later.awarded >= opened.awarded
    # The open cycle began by the earlier date: it gains exactly the awards of (early, late].
    gained = len([day for day in cycle_awards(accrual, allowance, later.start, later.end)
                  if early < day <= late]) * accrual.quantity
    assert later.awarded - opened.awarded == gained
