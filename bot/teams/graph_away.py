"""Pure: does what Microsoft Graph says of a Teams user mean they are away, and until which of
their own days — bot.chat.away's notion (`note_away`: away or not, the last day away or None
when not stated), as timebot.notify.away_facts.slack_status_away is for a Slack status.

- Automatic replies (`automaticRepliesSetting`): `alwaysEnabled` is away, return unknown;
  `scheduled` is away from `scheduledStartDateTime` until `scheduledEndDateTime` (a
  `dateTimeTimeZone`: a local time and the zone it is in, IANA or Windows name), the last day
  away being the end's date in the person's zone, the day before when it ends at their
  midnight; before the start or from the end, not away; `disabled`, not away.
- Presence: `outOfOfficeSettings.isOutOfOffice` or the activity `OutOfOffice` (Teams shows it
  while automatic replies are on, or an event "Show as Out of Office" is on the calendar) is
  away, return unknown (bot.teams.away_status reads it only when the replies could not be
  read; given both, away by either, and a return the replies state wins).
- Neither known (both unread): None, "not known away" (nothing recorded, nothing cleared)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from timebot.notify.periods import zone

# Graph writes Windows zone names where the mailbox's owner chose one; the common ones.
WINDOWS_ZONES = {
    "utc": "UTC", "gmt standard time": "Europe/London", "greenwich standard time": "UTC",
    "w. europe standard time": "Europe/Berlin", "romance standard time": "Europe/Paris",
    "central europe standard time": "Europe/Budapest",
    "central european standard time": "Europe/Warsaw", "e. europe standard time":
    "Europe/Chisinau", "fle standard time": "Europe/Kiev", "gtb standard time":
    "Europe/Bucharest", "russian standard time": "Europe/Moscow",
    "eastern standard time": "America/New_York", "central standard time": "America/Chicago",
    "mountain standard time": "America/Denver", "pacific standard time":
    "America/Los_Angeles", "us mountain standard time": "America/Phoenix",
    "e. south america standard time": "America/Sao_Paulo", "india standard time":
    "Asia/Kolkata", "china standard time": "Asia/Shanghai", "tokyo standard time": "Asia/Tokyo",
    "singapore standard time": "Asia/Singapore", "aus eastern standard time":
    "Australia/Sydney", "new zealand standard time": "Pacific/Auckland",
    "south africa standard time": "Africa/Johannesburg", "arabian standard time": "Asia/Dubai",
}


def zone_of(name: str | None) -> tzinfo:
    """The zone a `dateTimeTimeZone` names (IANA, or a Windows name); unknown: UTC."""
    text = (name or "").strip()
    if not text:
        return UTC
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    known = WINDOWS_ZONES.get(text.lower())
    return ZoneInfo(known) if known else UTC


def moment_of(value: Any) -> datetime | None:
    """A `dateTimeTimeZone` ({"dateTime": "2026-12-10T08:00:00.0000000", "timeZone": "UTC"})
    as an aware moment; None when it is not one."""
    if not isinstance(value, dict) or not isinstance(value.get("dateTime"), str):
        return None
    text = value["dateTime"].strip().removesuffix("Z")
    whole, _dot, fraction = text.partition(".")
    try:
        moment = datetime.fromisoformat(whole + (f".{fraction[:6]}" if fraction else ""))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=zone_of(value.get("timeZone")))


def last_day(end: datetime, time_zone: str | None) -> date:
    """The last day away when an absence ends at `end`: its date in the person's zone, the
    day before when it ends at their midnight."""
    local = end.astimezone(zone(time_zone))
    return local.date() - timedelta(days=1) if local.time() == datetime.min.time() \
        else local.date()


def replies_away(replies: dict[str, Any], now: datetime, time_zone: str | None
                 ) -> tuple[bool, date | None]:
    status = str(replies.get("status") or "").strip().lower()
    if status == "alwaysenabled":
        return True, None
    if status != "scheduled":
        return False, None
    start = moment_of(replies.get("scheduledStartDateTime"))
    end = moment_of(replies.get("scheduledEndDateTime"))
    if (start is not None and now < start) or (end is not None and now >= end):
        return False, None
    if end is None:
        return True, None
    return True, last_day(end, time_zone)


def presence_away(presence: dict[str, Any]) -> bool:
    settings = presence.get("outOfOfficeSettings")
    if isinstance(settings, dict) and settings.get("isOutOfOffice") is True:
        return True
    return str(presence.get("activity") or "").strip().lower() == "outofoffice"


def graph_away(replies: dict[str, Any] | None, presence: dict[str, Any] | None, now_ms: int,
               time_zone: str | None = None) -> tuple[bool, date | None] | None:
    """Away (and the last day away, None: not stated) from the automatic replies and the
    presence Graph answered (None: not read), at `now_ms`, dated in the person's `time_zone`;
    None when neither was read (not known)."""
    if replies is None and presence is None:
        return None
    now = datetime.fromtimestamp(now_ms / 1000, UTC)
    away, until = replies_away(replies, now, time_zone) if replies is not None \
        else (False, None)
    if away:
        return True, until
    if presence is not None and presence_away(presence):
        return True, None
    return False, None


def seen_of(replies: dict[str, Any] | None, presence: dict[str, Any] | None) -> str:
    """What was seen, for the record's message key: the same answer again changes nothing."""
    parts: list[str] = []
    if replies is not None:
        parts += [str(replies.get("status") or "")] + [
            str((replies.get(name) or {}).get("dateTime") or "") + "@" + str(
                (replies.get(name) or {}).get("timeZone") or "")
            for name in ("scheduledStartDateTime", "scheduledEndDateTime")
            if isinstance(replies.get(name) or {}, dict)]
    if presence is not None:
        parts.append(f"{presence.get('availability')}/{presence.get('activity')}/"
                     f"{presence_away(presence)}")
    return ":".join(parts)
