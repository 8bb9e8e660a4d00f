"""A person's localisation as the fronts read it over GraphQL (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LANGUAGES = ("en", "fr", "de", "es")

# Select these on a SvcPerson (`getPerson(id) { … }`) and give the dict to `localisation_of`.
LOCALISATION_FIELDS = """lang
        localisation {
          dateFormat { value path { id } } decimalFormat { value path { id } }
          thousandSeparator { value path { id } } firstDayOfWeek { value }
          timeFormat { value path { id } } timeZone { value } currency { value }
        }
        timeSettings { durationFormat { value path { id } } }"""


@dataclass(frozen=True)
class Localisation:
    """How one person reads dates, times, numbers and durations, and in which language.

    A format is None when nobody chose it (the service's default applies only as "not set"):
    timebot then keeps its house style (`Mon 16 Mar`, `7h 30m`, the language's own numbers).
    """

    lang: str = "en"
    time_zone: str = "UTC"
    date_format: str | None = None  # YYYY-MM-DD, DD/MM/YYYY, MM/DD/YYYY, DD.MM.YYYY, DD-MM-YYYY
    time_format: int | None = None  # 12 or 24
    decimal: str | None = None  # "." or ","
    thousands: str | None = None  # ",", ".", " ", "'" or ""
    first_day: int = 1  # 0 Sunday … 6 Saturday
    duration_format: int | None = None  # 0 h:mm, 1 decimal hours, 2 XhYm
    currency: str | None = None


ENGLISH = Localisation()


def language_of(*candidates: str | None) -> str:
    """The first candidate we speak (`fr-CA` -> `fr`), else English."""
    for value in candidates:
        code = (value or "").strip().replace("_", "-").split("-")[0].lower()
        if code in LANGUAGES:
            return code
    return "en"


def _chosen(attribute: Any) -> Any:
    """The value of a setting somebody set (a non-empty path), else None."""
    if not isinstance(attribute, dict) or not attribute.get("path"):
        return None
    return attribute.get("value")


def _value(attribute: Any) -> Any:
    return attribute.get("value") if isinstance(attribute, dict) else None


def localisation_of(person: dict[str, Any] | None, fallback_lang: str | None = None
                    ) -> Localisation:
    """The Localisation of a person read with `LOCALISATION_FIELDS` (missing parts: defaults).
    Language: the person's `lang`, else `fallback_lang` (the organisation's), else English."""
    if not person:
        return Localisation(lang=language_of(fallback_lang))
    local = person.get("localisation") or {}
    time = person.get("timeSettings") or {}
    first = _value(local.get("firstDayOfWeek"))
    decimal = _chosen(local.get("decimalFormat"))
    thousands = _chosen(local.get("thousandSeparator"))
    time_format = _chosen(local.get("timeFormat"))
    duration = _chosen(time.get("durationFormat"))
    return Localisation(
        lang=language_of(person.get("lang"), fallback_lang),
        time_zone=str(_value(local.get("timeZone")) or "UTC"),
        date_format=_chosen(local.get("dateFormat")),
        time_format=int(time_format) if time_format in (12, 24) else None,
        decimal=decimal if decimal in (".", ",") else None,
        thousands=thousands if isinstance(thousands, str) else None,
        first_day=int(first) if isinstance(first, int) and 0 <= first <= 6 else 1,
        duration_format=int(duration) if duration in (0, 1, 2) else None,
        currency=_value(local.get("currency")),
    )


DATE_FORMATS = ("YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY", "DD.MM.YYYY", "DD-MM-YYYY")
_THOUSANDS = (",", ".", " ", "'", "")


def reading_query(local: Localisation) -> dict[str, str]:
    """How `local` reads a page, as a link's query parameters (what differs from English
    house style): a page opened from a link, whose reader is not signed in, reads it back
    with `reading_from_query`."""
    found = {"lang": local.lang if local.lang != "en" else None,
             "date": local.date_format, "clock": str(local.time_format or "") or None,
             "decimal": local.decimal, "thousands": local.thousands}
    return {name: value for name, value in found.items() if value is not None}


def reading_from_query(query: Mapping[str, str]) -> Localisation:
    """Pure: the Localisation a link's query names (`reading_query`); anything unknown,
    malformed or hostile is left at the house style."""
    def known(name: str, values: tuple[str, ...]) -> str | None:
        value = query.get(name)
        return value if value in values else None

    clock = known("clock", ("12", "24"))
    return Localisation(lang=known("lang", LANGUAGES) or "en",
                        date_format=known("date", DATE_FORMATS),
                        time_format=int(clock) if clock else None,
                        decimal=known("decimal", (".", ",")),
                        thousands=known("thousands", _THOUSANDS))
