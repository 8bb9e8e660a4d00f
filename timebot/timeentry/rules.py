"""The rules of time entry that apply to a person, as the fronts know them: read once over
GraphQL (the person's `timeSettings` and `localisation`, and the projects' own values, which
beat the person's for entries on them), kept per person, and forgotten when the service tells
of a change in the organisation (its `settingsUpdate` event, sent by the embedded service when
a setting is edited) or after `TTL_MS` (a service that sends no such
event; a stale rule costs one refused call, whose message the front then relays).

`refusal` is pure: the words a front answers a refused entry with, naming the setting and what
would be accepted, before it calls the service ("Entries before Sun 1 Nov 2026 are locked
(lockDate): ..."). `shown_duration` shows a duration as `durationFormat` says, in the reader's
numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

import structlog

from plumbing import periods
from timebot import l10n
from timebot.client import ServiceClient, operation
from timebot.errors import ServiceClientError
from timebot.events.bus import SETTINGS_UPDATE, ServiceEvent
from timebot.l10n import N_

log = structlog.get_logger("timebot.entry_rules")

TTL_MS = 5 * 60_000
CLOSED = {  # per period noun (plumbing.periods.NOUNS): whole sentences, each language agrees them
    "day": N_("The day of {dates} is closed (turnOffPeriodAfter: {days} days after it ends): "
              "log time from {day} on."),
    "week": N_("The week of {dates} is closed (turnOffPeriodAfter: {days} days after it "
               "ends): log time from {day} on."),
    "fortnight": N_("The fortnight of {dates} is closed (turnOffPeriodAfter: {days} days after "
                    "it ends): log time from {day} on."),
    "half-month": N_("The half-month of {dates} is closed (turnOffPeriodAfter: {days} days "
                     "after it ends): log time from {day} on."),
    "month": N_("The month of {dates} is closed (turnOffPeriodAfter: {days} days after it "
                "ends): log time from {day} on."),
}
# The person's rules, and the settings a project may set for the entries on it (its own value
# beats the person's).
PERSON_RULES = operation(
    """query PersonRules($id: SvcId!) {
      getPerson(id: $id) {
        timeSettings {
          lockDate { value { ts } } forceComment { value } minimumTimeEntry { value }
          noFutureTimeRecord { value } periodicity { value } allowPartialPeriodSubmit { value }
          turnOffPeriodAfter { value } durationFormat { value path { id } }
          timesheetReminder { value { timing hour } }
        }
        localisation { timeZone { value } firstDayOfWeek { value } }
      }
      getProjects {
        id timeSettings { lockDate { value { ts } } forceComment { value }
                          minimumTimeEntry { value } noFutureTimeRecord { value }
                          turnOffPeriodAfter { value } }
      }
    }"""
)


def _values(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """{name: value} of a `timeSettings` answer, SvcTime values as ms, unset values left out."""
    found: dict[str, Any] = {}
    for name, attribute in (settings or {}).items():
        value = (attribute or {}).get("value")
        if isinstance(value, dict) and "ts" in value:
            value = int(value["ts"])
        if value is not None:
            found[name] = value
    return found


@dataclass(frozen=True)
class Rules:
    """A person's rules of time entry (values as the service resolved them for the person)."""

    zone: ZoneInfo
    first_day: int = periods.DEFAULT_FIRST_DAY
    settings: Mapping[str, Any] = field(default_factory=dict)
    # project id -> the project's own values
    projects: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def periodicity(self) -> str:
        return periods.known(self.settings.get("periodicity"))

    @property
    def duration_format(self) -> int | None:
        """The person's `durationFormat` where an account, tag or person sets it (None: the
        fronts' own `2h 30m`)."""
        value = self.settings.get("durationFormat")
        return value if value in (0, 1, 2) else None

    @property
    def reminder(self) -> Mapping[str, Any] | None:
        value = self.settings.get("timesheetReminder")
        return value if isinstance(value, Mapping) else None

    def value(self, name: str, project_ids: Sequence[str] = ()) -> Any:
        for project in project_ids:
            own = self.projects.get(project, {})
            if name in own:
                return own[name]
        return self.settings.get(name)

    def period(self, moment_ms: int, back: int = 0) -> tuple[int, int]:
        """(start, end) of the person's period holding the moment, or `back` periods before."""
        start, end = periods.period_at(self.periodicity, moment_ms, self.zone, self.first_day)
        for _ in range(back):
            start, end = periods.previous_period(self.periodicity, start, self.zone,
                                                 self.first_day)
        return start, end


def rules_of(data: Mapping[str, Any]) -> Rules:
    """Rules from a PersonRules answer (pure)."""
    person = data.get("getPerson") or {}
    local = person.get("localisation") or {}
    settings = _values(person.get("timeSettings"))
    if not ((person.get("timeSettings") or {}).get("durationFormat") or {}).get("path"):
        settings.pop("durationFormat", None)  # the default: the fronts show `2h 30m`
    first = (local.get("firstDayOfWeek") or {}).get("value")
    return Rules(
        periods.zone_of((local.get("timeZone") or {}).get("value")),
        first if isinstance(first, int) else periods.DEFAULT_FIRST_DAY,
        settings,
        {str(p["id"]): _values(p.get("timeSettings"))
         for p in data.get("getProjects") or [] if p and _values(p.get("timeSettings"))},
    )


def shown_duration(ms: int, rules: Rules) -> str:
    """A duration in the reader's formats (`l10n.current()`: their decimal separator, their
    language's numbers) and the person's `durationFormat` as their rules resolve it (0 h:mm
    `2:30`, 1 decimal hours `2,5 h`, 2 or none `2h 30m`)."""
    local = l10n.current()
    if rules.duration_format is not None:
        local = replace(local, duration_format=rules.duration_format)
    return l10n.format_duration(ms, local)


def refusal(rules: Rules, start_ms: int, duration_ms: int, comment: str | None,
            project_ids: Sequence[str], now_ms: int, example: str = "/time") -> str | None:
    """Pure: why the service would refuse the entry, naming the setting and what it accepts;
    None when the rules known here accept it (the service still decides)."""
    zone = rules.zone
    lock = rules.value("lockDate", project_ids)
    if isinstance(lock, int) and start_ms < lock:
        day = l10n.format_entry_day(periods.local_day(lock, zone), l10n.current())
        return l10n._("Entries before {day} are locked (lockDate): log time on {day} or "
                 "later.").format(day=day)
    if rules.value("noFutureTimeRecord", project_ids) and start_ms > now_ms:
        return l10n._("Time in the future is not accepted (noFutureTimeRecord): log it once done, "
                 "today or earlier.")
    minimum = rules.value("minimumTimeEntry", project_ids)
    if isinstance(minimum, int) and minimum and duration_ms < minimum:
        shown = shown_duration(minimum, rules)
        return l10n._("Entries shorter than {duration} are not accepted (minimumTimeEntry): log at "
                 "least {duration}.").format(duration=shown)
    if rules.value("forceComment", project_ids) and not (comment or "").strip():
        return l10n._("A comment is required (forceComment): say what you did after the entry, "
                 "e.g. {example} 2h @acme what you did").format(example=example)
    days = rules.value("turnOffPeriodAfter", project_ids)  # a project's own first
    if isinstance(days, int) and now_ms >= periods.closed_since(
            rules.periodicity, start_ms, zone, rules.first_day, days):
        start, end = rules.period(start_ms)
        earliest = periods.local_day(now_ms, zone) - timedelta(days=days)
        open_from = periods.period_of(rules.periodicity, earliest, rules.first_day)[0]
        noun = periods.NOUNS[rules.periodicity]
        return l10n._(CLOSED.get(noun, CLOSED["week"])).format(
            dates=l10n.format_period(start, end, replace(l10n.current(), time_zone=zone.key),
                                     named=False), days=days,
            day=l10n.format_entry_day(open_from, l10n.current()))
    return None


class RulesCache:
    """Each person's Rules, read once (with the person's own key) and kept until the service
    tells of a change in their organisation or `TTL_MS` passes."""

    def __init__(self, client: ServiceClient, now_ms: Callable[[], int],
                 ttl_ms: int = TTL_MS) -> None:
        self.client = client
        self.now_ms = now_ms
        self.ttl_ms = ttl_ms
        self._kept: dict[tuple[str, str], tuple[int, Rules]] = {}

    async def rules(self, organisation_id: str, person_id: str, apikey: str) -> Rules | None:
        """The person's rules; None when the service cannot say (the fronts then let the
        service decide)."""
        key = (organisation_id, person_id)
        kept = self._kept.get(key)
        now = self.now_ms()
        if kept is not None and kept[0] > now:
            return kept[1]
        try:
            data = await self.client.execute(PERSON_RULES, {"id": person_id}, apikey=apikey)
        except ServiceClientError as error:
            log.info("entry_rules_unread", person=person_id, error=str(error))
            return None
        found = rules_of(data)
        self._kept[key] = (now + self.ttl_ms, found)
        return found

    def forget(self, organisation_id: str) -> None:
        for key in [k for k in self._kept if k[0] == organisation_id]:
            del self._kept[key]

    handles = (SETTINGS_UPDATE,)  # the events on_event reads

    async def on_event(self, event: ServiceEvent) -> None:
        """A setting of the organisation edited: its people's rules are read again."""
        self.forget(event.organisation_id)
