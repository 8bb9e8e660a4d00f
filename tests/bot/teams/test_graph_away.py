"""bot.teams.graph_away, pure: what Microsoft Graph's documented answers (automaticRepliesSetting,
presence) say of a Teams user's absence, and until which of their own days."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from bot.teams.graph_away import graph_away, moment_of, seen_of, zone_of

NOW = int(datetime(2026, 12, 2, 9, 30, tzinfo=UTC).timestamp() * 1000)  # a Wednesday


def scheduled(start: str, end: str, time_zone: str = "UTC") -> dict[str, Any]:
    """The shape Graph documents (GET /users/{id}/mailboxSettings/automaticRepliesSetting)."""
    return {"@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users('x')/"
                              "mailboxSettings/automaticRepliesSetting",
            "status": "scheduled", "externalAudience": "all",
            "scheduledStartDateTime": {"dateTime": f"{start}.0000000", "timeZone": time_zone},
            "scheduledEndDateTime": {"dateTime": f"{end}.0000000", "timeZone": time_zone},
            "internalReplyMessage": "<html>Away</html>", "externalReplyMessage": ""}


PRESENT = {"id": "x", "availability": "Available", "activity": "Available",
           "outOfOfficeSettings": {"message": None, "isOutOfOffice": False}}


def test_disabled_is_not_away_and_nothing_read_is_not_known() -> None:
    assert graph_away({"status": "disabled"}, None, NOW) == (False, None)
    assert graph_away({"status": "disabled"}, PRESENT, NOW) == (False, None)
    assert graph_away(None, PRESENT, NOW) == (False, None)
    assert graph_away(None, None, NOW) is None


def test_always_enabled_is_away_with_no_return_date() -> None:
    assert graph_away({"status": "alwaysEnabled"}, None, NOW) == (True, None)


def test_a_scheduled_window_holds_now_and_ends_on_its_last_day() -> None:
    replies = scheduled("2026-11-30T08:00:00", "2026-12-07T17:00:00")
    assert graph_away(replies, None, NOW) == (True, date(2026, 12, 7))
    # ending at midnight: the day before is the last day away
    assert graph_away(scheduled("2026-11-30T00:00:00", "2026-12-07T00:00:00"), None,
                      NOW) == (True, date(2026, 12, 6))
    # not yet begun, or over: not away
    assert graph_away(scheduled("2026-12-03T00:00:00", "2026-12-07T00:00:00"), None,
                      NOW) == (False, None)
    assert graph_away(scheduled("2026-11-20T00:00:00", "2026-12-02T09:30:00"), None,
                      NOW) == (False, None)


def test_time_zones_of_the_window_and_of_the_person() -> None:
    # begins at 10:00 in Berlin = 09:00 UTC: under way at 09:30 UTC
    berlin = scheduled("2026-12-02T10:00:00", "2026-12-04T00:00:00", "W. Europe Standard Time")
    assert graph_away(berlin, None, NOW, "Europe/Berlin") == (True, date(2026, 12, 3))
    # the same end read by a New York person: 18:00 on the 3rd is their last day
    assert graph_away(berlin, None, NOW, "America/New_York") == (True, date(2026, 12, 3))
    # 11:00 in Tokyo = 02:00 UTC: over by 09:30 UTC
    tokyo = scheduled("2026-12-01T00:00:00", "2026-12-02T11:00:00", "Asia/Tokyo")
    assert graph_away(tokyo, None, NOW, "Asia/Tokyo") == (False, None)
    # begins at 10:00 in New York = 15:00 UTC: not yet
    assert graph_away(scheduled("2026-12-02T10:00:00", "2026-12-09T10:00:00",
                                "Eastern Standard Time"), None, NOW) == (False, None)
    # a midnight end in the person's zone, given in UTC (Paris is UTC+1 in December)
    paris = scheduled("2026-11-30T00:00:00", "2026-12-05T23:00:00")
    assert graph_away(paris, None, NOW, "Europe/Paris") == (True, date(2026, 12, 5))
    assert graph_away(paris, None, NOW, "UTC") == (True, date(2026, 12, 5))


def test_zones_and_moments_as_graph_writes_them() -> None:
    assert str(zone_of("Pacific Standard Time")) == "America/Los_Angeles"
    assert str(zone_of("Europe/Paris")) == "Europe/Paris"
    assert zone_of("Nowhere Standard Time") == UTC and zone_of(None) == UTC
    assert moment_of({"dateTime": "2026-12-07T17:00:00.0000000", "timeZone": "UTC"}) == \
        datetime(2026, 12, 7, 17, tzinfo=UTC)
    assert moment_of({"dateTime": "not a time", "timeZone": "UTC"}) is None
    assert moment_of(None) is None
    # a malformed window: what can be read of it
    broken = {"status": "scheduled", "scheduledStartDateTime": {"dateTime": "x"}}
    assert graph_away(broken, None, NOW) == (True, None)


def test_presence_out_of_office_when_the_replies_say_nothing() -> None:
    out = {**PRESENT, "availability": "Offline", "activity": "OutOfOffice"}
    assert graph_away(None, out, NOW) == (True, None)
    flagged = {**PRESENT, "outOfOfficeSettings": {"message": "Off", "isOutOfOffice": True}}
    assert graph_away({"status": "disabled"}, flagged, NOW) == (True, None)
    assert graph_away(None, {**PRESENT, "activity": "OffWork"}, NOW) == (False, None)
    # a return date the replies state wins over the presence's none
    replies = scheduled("2026-11-30T08:00:00", "2026-12-07T17:00:00")
    assert graph_away(replies, out, NOW) == (True, date(2026, 12, 7))


def test_what_was_seen_names_the_window_and_the_presence() -> None:
    replies = scheduled("2026-11-30T08:00:00", "2026-12-07T17:00:00")
    assert seen_of(replies, None) != seen_of(
        scheduled("2026-11-30T08:00:00", "2026-12-08T17:00:00"), None)
    assert seen_of(replies, None) == seen_of(dict(replies), None)
    assert seen_of(None, PRESENT) != seen_of(None, {**PRESENT, "activity": "OutOfOffice"})
