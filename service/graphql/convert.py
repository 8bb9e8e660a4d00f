"""Result conventions: times as SvcTime {ts iso}, money as {value currency}."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def iso(ms: int) -> str:
    """ISO 8601 in UTC with milliseconds, e.g. 2026-03-15T09:00:00.000Z."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def svc_time(ms: int | None) -> dict[str, Any] | None:
    if ms is None:
        return None
    return {"ts": ms, "iso": iso(ms)}


def amount(value: int, currency: str) -> dict[str, Any]:
    return {"value": value, "currency": currency}
