"""Public holidays: the country calendars of the maintained `holidays` package, and a
calendar's own changes (added, renamed, moved, disabled or removed holidays).

A calendar is stored as JSON in the `publicHolidays` setting of the organisation, a tag or a
person: {"code", "lang", "custom": [{id, name, date, disabled}], "edits": {id: {...}}}.
A generated holiday's id is 16 hex digits of the country code's hash and 8 of its date (days
since 1970-01-01), so the id names the same holiday in every language and year.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Any

import holidays as holiday_package
from holidays import registry

from service.errors import BadInput

EPOCH = date(1970, 1, 1)
DAY_MS = 86_400_000


@cache
def countries() -> dict[str, dict[str, Any]]:
    """{code: {code, name, languages, flag}} of every country with a two-letter code."""
    languages = holiday_package.list_localized_countries()
    found: dict[str, dict[str, Any]] = {}
    for entry in registry.COUNTRIES.values():
        class_name, code = entry[0], entry[1]
        if len(code) != 2:
            continue
        found[code] = {
            "code": code,
            "name": re.sub(r"(?<=[a-z])(?=[A-Z])", " ", class_name),
            "languages": list(languages.get(code, [])),
            "flag": "".join(chr(0x1F1E6 + ord(letter) - ord("A")) for letter in code),
        }
    return dict(sorted(found.items()))


def country_codes(code: str | None) -> list[dict[str, Any]]:
    """getHolidayCountryCodes: every country, or those whose code starts with `code`."""
    prefix = (code or "").strip().upper()
    return [item for key, item in countries().items() if key.startswith(prefix)]


def check_code(code: str | None, argument: str = "code") -> str:
    value = (code or "").strip().upper()
    if value not in countries():
        raise BadInput(argument, f"{code!r} is not a country code with public holidays "
                                 "(see getHolidayCountryCodes)")
    return value


def check_lang(code: str, lang: str | None, argument: str = "lang") -> str:
    """The package's language for `lang` ('de', 'en' → 'en_US'); None: the country's own."""
    supported = countries()[code]["languages"]
    if lang is None or lang == "":
        return ""
    if lang in supported:
        return lang
    for candidate in supported:
        if candidate.split("_")[0].lower() == lang.split("_")[0].lower():
            return str(candidate)
    raise BadInput(argument, f"{lang!r} is not a language of {code}'s holidays "
                             f"(one of: {', '.join(supported) or 'none'})")


def holiday_id(code: str, day: date) -> str:
    prefix = hashlib.sha1(code.encode()).hexdigest()[:16]
    return f"{prefix}{(day - EPOCH).days:08x}"


def date_of_id(code: str, holiday_id_: str) -> date | None:
    """The date a generated holiday id names for the country, or None."""
    if len(holiday_id_) != 24 or holiday_id_[:16] != holiday_id(code, EPOCH)[:16]:
        return None
    try:
        return EPOCH + timedelta(days=int(holiday_id_[16:], 16))
    except ValueError:
        return None


def day_ms(day: date) -> int:
    return (day - EPOCH).days * DAY_MS


def day_of_ms(ms: int) -> date:
    return datetime.fromtimestamp(ms / 1000, UTC).date()


@dataclass(frozen=True)
class Holiday:
    id: str
    name: str
    date: date
    disabled: bool

    def as_graphql(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "date": day_ms(self.date),
                "disabled": self.disabled}


def generated(code: str, lang: str, year: int) -> list[Holiday]:
    """The country's holidays of the year from the `holidays` package."""
    calendar = holiday_package.country_holidays(code, years=year, language=lang or None)
    return [Holiday(holiday_id(code, day), name, day, False)
            for day, name in sorted(calendar.items())]


def calendar_holidays(value: Mapping[str, Any], year: int) -> list[Holiday]:
    """A stored calendar's holidays of the year: generated ones with their edits, plus the
    calendar's own; removed ones left out, disabled ones kept (marked)."""
    code, lang = str(value.get("code") or ""), str(value.get("lang") or "")
    edits: Mapping[str, Any] = value.get("edits") or {}
    found: list[Holiday] = []
    if code:
        for base in generated(code, lang, year):
            change = edits.get(base.id) or {}
            if change.get("removed"):
                continue
            found.append(Holiday(
                base.id,
                str(change.get("name", base.name)),
                day_of_ms(int(change["date"])) if "date" in change else base.date,
                bool(change.get("disabled", False)),
            ))
    for item in value.get("custom") or []:
        day = day_of_ms(int(item["date"]))
        if day.year == year:
            found.append(Holiday(str(item["id"]), str(item["name"]), day,
                                 bool(item.get("disabled"))))
    return sorted(found, key=lambda h: (h.date, h.name, h.id))


def days_off(value: Mapping[str, Any] | None, years: range) -> dict[date, str]:
    """{date: name} of the calendar's enabled holidays in those years."""
    if not value:
        return {}
    return {h.date: h.name for year in years for h in calendar_holidays(value, year)
            if not h.disabled}
