"""The period label of the approval workflow's messages is the UTC days of the period's
first and last millisecond, as `iso` formats them."""

from __future__ import annotations

from service.graphql.convert import iso
from service.timesheets.actor import period_label

DAY_MS = 86_400_000
MOMENTS = [
    -DAY_MS - 1, -1, 0, 1, DAY_MS - 1, DAY_MS,
    951_782_400_000 - 1, 951_782_400_000,  # 2000-02-29 begins
    1_735_689_600_000 - 1, 1_735_689_600_000,  # 2025-01-01 begins
    253_402_300_799_999,  # the last millisecond of 9999
]


def test_period_labels_are_the_iso_days_of_the_first_and_last_millisecond() -> None:
    for start in MOMENTS:
        for end in MOMENTS:
            expected = f"{iso(start)[:10]} to {iso(max(start, end - 1))[:10]}"
            assert period_label(start, end) == expected, (start, end)


def test_a_week_is_labelled_by_its_first_and_last_day() -> None:
    assert period_label(1_735_689_600_000, 1_735_689_600_000 + 7 * DAY_MS) == (
        "2025-01-01 to 2025-01-07"
    )
