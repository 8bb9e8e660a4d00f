"""The rate rule of error receipts: at most one per sender per hour (pure)."""

from __future__ import annotations

from mail.outbound.receipt_sender import (
    ERROR_RECEIPT_WINDOW_MS,
    error_receipt_allowed,
    next_error_receipt_at,
)

HOUR = ERROR_RECEIPT_WINDOW_MS
T0 = 1_767_607_200_000


def test_first_error_receipt_is_allowed() -> None:
    assert error_receipt_allowed([], T0)
    assert next_error_receipt_at([]) is None


def test_one_per_hour() -> None:
    assert not error_receipt_allowed([T0], T0)
    assert not error_receipt_allowed([T0], T0 + HOUR - 1)
    assert error_receipt_allowed([T0], T0 + HOUR)
    assert next_error_receipt_at([T0 - 5 * HOUR, T0, T0 - HOUR]) == T0 + HOUR


def test_future_timestamps_count_as_recent() -> None:
    assert not error_receipt_allowed([T0 + 10_000], T0)


def test_custom_window() -> None:
    assert error_receipt_allowed([T0], T0 + 60_000, window_ms=60_000)
    assert not error_receipt_allowed(iter([T0]), T0 + 59_999, window_ms=60_000)
