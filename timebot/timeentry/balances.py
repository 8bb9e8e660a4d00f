"""Time off left: the person's allowances as the service's getAbsenceQuotaReport gives them,
read as the person (own key), shown by quick time entry after an absence is logged and on
the Slack Home.

Per allowance, the report's cycle that covers the day asked for: what remains is
available + accruedCorrection - consumed, in the absence type's unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from timebot import l10n
from timebot.client import ServiceClient, operation
from timebot.l10n import _, ngettext

DAY_MS = 86_400_000

QUERY_TEXT = """query TimeOffLeft($person: SvcId!, $types: [SvcId!], $start: SvcTimestamp!,
    $end: SvcTimestamp!) {
  getAbsenceQuotaReport(startTime: $start, endTime: $end, filters: [{personId: $person}],
                        absenceTypeIds: $types) {
    quotas { quotaId absenceTypeId startTime { ts } endTime { ts } available
             accruedCorrection consumed }
    absenceTypes { id name unit }
  }
}"""
TIME_OFF_LEFT = operation(QUERY_TEXT)


@dataclass(frozen=True)
class Balance:
    type_name: str
    unit: str
    remaining: float
    end_ms: int  # the covering cycle's end (exclusive)


def balances_of(report: dict[str, Any] | None) -> list[Balance]:
    """The report's latest cycle per allowance (pure)."""
    if not report:
        return []
    types = {t["id"]: t for t in report.get("absenceTypes") or [] if t}
    latest: dict[str, dict[str, Any]] = {}
    for entry in report.get("quotas") or []:
        if not entry:
            continue
        known = latest.get(entry["quotaId"])
        if known is None or entry["startTime"]["ts"] >= known["startTime"]["ts"]:
            latest[entry["quotaId"]] = entry
    found = []
    for entry in latest.values():
        kind = types.get(entry["absenceTypeId"]) or {}
        remaining = (float(entry["available"]) + float(entry["accruedCorrection"])
                     - float(entry["consumed"]))
        found.append(Balance(str(kind.get("name") or "Time off"), str(kind.get("unit") or "day"),
                             remaining, int(entry["endTime"]["ts"])))
    return sorted(found, key=lambda b: (b.type_name, b.end_ms))


def amount(value: float, unit: str) -> str:
    """`8.5 days`, `1 hour` (`8,5 jours` for a French reader)."""
    local = l10n.current()
    if local.lang == "en" and local.decimal is None and local.thousands is None:
        number = f"{value:.2f}".rstrip("0").rstrip(".")
    else:
        number = l10n.format_number(value, local)
    count = 1 if abs(value) == 1 else 2
    if unit == "hour":
        return ngettext("{n} hour", "{n} hours", count).format(n=number)
    if unit == "day":
        return ngettext("{n} day", "{n} days", count).format(n=number)
    return f"{number} {unit}{'' if abs(value) == 1 else 's'}"


def balance_text(balance: Balance, zone: ZoneInfo) -> str:
    """`Vacation left: 8.5 days (until 31 Dec 2026)` (pure; in the reader's language)."""
    last = datetime.fromtimestamp((balance.end_ms - 1) / 1000, zone)
    local = l10n.current()
    until = f"{last:%d %b %Y}" if local.lang == "en" and not local.date_format \
        else l10n.format_date(last.date(), local) if local.date_format \
        else l10n.format_day(last.date(), local, year=True)
    return _("{absence} left: {amount} (until {day})").format(
        absence=balance.type_name, amount=amount(balance.remaining, balance.unit), day=until)


def day_bounds(day_ms: int, today_ms: int, zone: ZoneInfo) -> tuple[int, int]:
    """[the local day of `day_ms`, the end of the later of that day and today)."""
    first = datetime.fromtimestamp(day_ms / 1000, zone).date()
    last = max(first, datetime.fromtimestamp(today_ms / 1000, zone).date())

    def midnight(day: Any) -> int:
        return int(datetime(day.year, day.month, day.day, tzinfo=zone).timestamp() * 1000)

    return midnight(first), midnight(last + timedelta(days=1))


async def time_off_left(
    client: ServiceClient, apikey: str, person_id: str, type_ids: list[str] | None,
    start_ms: int, end_ms: int,
) -> list[Balance]:
    data = await client.execute(
        TIME_OFF_LEFT,
        {"person": person_id, "types": type_ids, "start": start_ms, "end": end_ms},
        apikey=apikey,
    )
    return balances_of(data.get("getAbsenceQuotaReport"))
