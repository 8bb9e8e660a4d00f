"""timebot.l10n: the pure formats (dates, times, numbers, durations, week start) for each
setting, the localisation read from a person, and the catalogs: every text the fronts mark is
translated in fr, de and es, with the same placeholders, and plural forms follow the language."""

from __future__ import annotations

import re
import sys
from datetime import date, datetime, time
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from timebot import l10n
from timebot.l10n.texts import catalog_path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
from update_catalogs import extracted  # noqa: E402

FRENCH = l10n.Localisation(lang="fr", date_format="DD/MM/YYYY", decimal=",", thousands=" ",
                           duration_format=1, time_format=24)
MARCH_2 = date(2026, 3, 2)  # a Monday


@pytest.mark.parametrize(("setting", "shown"), [
    (None, "2026-03-02"), ("YYYY-MM-DD", "2026-03-02"), ("DD/MM/YYYY", "02/03/2026"),
    ("MM/DD/YYYY", "03/02/2026"), ("DD.MM.YYYY", "02.03.2026"), ("DD-MM-YYYY", "02-03-2026"),
])
def test_dates_in_each_format(setting: str | None, shown: str) -> None:
    assert l10n.format_date(MARCH_2, l10n.Localisation(date_format=setting)) == shown


def test_days_and_periods_keep_the_house_style_unless_a_format_was_chosen() -> None:
    assert l10n.format_day(MARCH_2) == "Mon 02 Mar"
    assert l10n.format_day(MARCH_2, l10n.Localisation(lang="de")) == "Mo. 02 März"
    assert l10n.format_day(MARCH_2, FRENCH) == "lun. 02/03/2026"
    start = 1_772_409_600_000  # 2026-03-02T00:00Z
    week = start + 7 * 86_400_000
    assert l10n.format_period(start, week) == "Mon 02 Mar to Sun 08 Mar 2026"
    assert l10n.format_period(start, week, named=False) == "2026-03-02 to 2026-03-08"
    assert l10n.format_period(start, week, FRENCH, named=False) == "02/03/2026 au 08/03/2026"
    assert l10n.format_period(start, start + 86_400_000) == "Mon 02 Mar 2026"
    # The person's time zone: Monday 00:00 UTC is still Sunday in New York.
    new_york = l10n.Localisation(time_zone="America/New_York")
    assert l10n.format_period(start, week, new_york, named=False) == "2026-03-01 to 2026-03-08"


def test_twelve_or_twenty_four_hours() -> None:
    assert l10n.format_time(time(14, 5)) == "14:05"
    assert l10n.format_time(time(14, 5), l10n.Localisation(time_format=12)) == "2:05 PM"
    assert l10n.format_datetime(1_772_460_300_000) == "2026-03-02 14:05 UTC"
    paris = l10n.Localisation(lang="fr", date_format="DD/MM/YYYY", time_zone="Europe/Paris")
    assert l10n.format_datetime(1_772_460_300_000, paris) == "02/03/2026 15:05 CET"
    assert l10n.format_time(datetime(2026, 3, 2, 9, 0)) == "09:00"


@pytest.mark.parametrize(("local", "shown"), [
    (l10n.ENGLISH, "1,234.5"),
    (FRENCH, "1 234,5"),
    (l10n.Localisation(decimal=",", thousands="."), "1.234,5"),
    (l10n.Localisation(decimal=".", thousands="'"), "1'234.5"),
    (l10n.Localisation(decimal=".", thousands=""), "1234.5"),
    (l10n.Localisation(lang="de"), "1.234,5"),  # nothing chosen: the language's own
    (l10n.Localisation(lang="fr"), "1\u202f234,5"),
])
def test_numbers_with_the_chosen_separators(local: l10n.Localisation, shown: str) -> None:
    assert l10n.format_number(1234.5, local) == shown


@pytest.mark.parametrize(("fmt", "shown"), [
    (None, "7h 30m"), (0, "7:30"), (1, "7.5 h"), (2, "7h 30m"),
])
def test_durations_in_each_format(fmt: int | None, shown: str) -> None:
    assert l10n.format_duration(27_000_000, l10n.Localisation(duration_format=fmt)) == shown


def test_decimal_hours_use_the_persons_separator_and_language() -> None:
    assert l10n.format_duration(27_000_000, FRENCH) == "7,5 h"
    german = l10n.Localisation(lang="de", duration_format=1)
    assert l10n.format_duration(4_500_000_000, german) == "1.250 Std."
    assert l10n.format_duration(-1_800_000, l10n.Localisation(duration_format=0)) == "-0:30"


@pytest.mark.parametrize(("first", "start"), [
    (1, date(2026, 3, 2)), (0, date(2026, 3, 1)), (6, date(2026, 2, 28)), (3, date(2026, 3, 4)),
])
def test_the_week_starts_on_the_chosen_day(first: int, start: date) -> None:
    wednesday = date(2026, 3, 4)
    assert l10n.week_start(wednesday, l10n.Localisation(first_day=first)) == start


def test_a_localisation_read_from_a_person() -> None:
    chosen = [{"id": "p1", "collection": "persons", "name": "Amélie"}]
    person = {
        "lang": "fr-CA",
        "localisation": {
            "dateFormat": {"value": "DD/MM/YYYY", "path": chosen},
            "decimalFormat": {"value": ",", "path": chosen},
            "thousandSeparator": {"value": " ", "path": chosen},
            "timeFormat": {"value": 24, "path": []},  # the default: nobody chose it
            "firstDayOfWeek": {"value": 0},
            "timeZone": {"value": "Europe/Paris"},
            "currency": {"value": "EUR"},
        },
        "timeSettings": {"durationFormat": {"value": 0, "path": []}},
    }
    local = l10n.localisation_of(person)
    assert local == l10n.Localisation(
        lang="fr", time_zone="Europe/Paris", date_format="DD/MM/YYYY", time_format=None,
        decimal=",", thousands=" ", first_day=0, duration_format=None, currency="EUR")
    assert l10n.localisation_of(None) == l10n.ENGLISH
    assert l10n.localisation_of({"lang": None}, fallback_lang="de").lang == "de"
    hostile = {"lang": "../../etc", "localisation": {
        "dateFormat": {"value": "%s%n", "path": chosen}, "firstDayOfWeek": {"value": 9},
        "decimalFormat": {"value": "x", "path": chosen}}}
    odd = l10n.localisation_of(hostile)
    assert (odd.lang, odd.first_day, odd.decimal) == ("en", 1, None)
    assert l10n.format_date(MARCH_2, odd) == "2026-03-02"  # an unknown format: ISO


@pytest.mark.parametrize("code", ["en", "EN", "pt-BR", "", None, "xx", "zz_ZZ"])
def test_languages_we_do_not_speak_read_english(code: str | None) -> None:
    assert l10n.language_of(code) == "en"


@pytest.mark.parametrize(("code", "lang"), [("fr", "fr"), ("de-AT", "de"), ("es_MX", "es")])
def test_languages_we_speak(code: str, lang: str) -> None:
    assert l10n.language_of(code) == lang


@pytest.fixture(scope="module")
def source_texts() -> set[object]:
    return {message.id for message in extracted() if message.id}


def _placeholders(text: str) -> set[str]:
    return set(re.findall(r"%\(\w+\)s|\{\w+\}", text))


@pytest.mark.parametrize("lang", ["fr", "de", "es"])
def test_every_text_of_the_fronts_is_translated(lang: str, source_texts: set[object]) -> None:
    source = source_texts
    assert len(source) > 80
    with catalog_path(lang).open("rb") as handle:
        catalog = read_po(handle, locale=lang)
    translated = {message.id: message.string for message in catalog if message.id}
    missing = sorted(str(m) for m in source - set(translated))
    assert not missing, f"not in the {lang} catalog (run scripts/update_catalogs.py): {missing}"
    for msgid in source:
        ids = msgid if isinstance(msgid, tuple) else (msgid,)
        strings = translated[msgid]
        strings = strings if isinstance(strings, tuple) else (strings,)
        assert all(strings), f"{lang}: untranslated {msgid!r}"
        for string in strings:
            assert _placeholders(string) == _placeholders(ids[-1]), (lang, msgid, string)


def test_plural_forms_follow_the_language() -> None:
    with l10n.using(l10n.Localisation(lang="fr")):
        one = l10n.ngettext("%(count)s timesheet waits for your approval:",
                            "%(count)s timesheets wait for your approval:", 0)
        many = l10n.ngettext("%(count)s timesheet waits for your approval:",
                             "%(count)s timesheets wait for your approval:", 2)
    assert one == "%(count)s feuille de temps attend votre approbation :"  # French: 0 is one
    assert many == "%(count)s feuilles de temps attendent votre approbation :"
    with l10n.using(l10n.Localisation(lang="de")):
        assert l10n.ngettext("%(count)s timesheet waits for your approval:",
                             "%(count)s timesheets wait for your approval:", 0).startswith(
            "%(count)s Stundenzettel warten")
    assert l10n.current() == l10n.ENGLISH  # the block restored the default


def test_the_language_in_force_does_not_leak_between_tasks() -> None:
    import asyncio

    async def speak(local: l10n.Localisation) -> str:
        with l10n.using(local):
            await asyncio.sleep(0)
            return l10n._("Approve")

    async def both() -> list[str]:
        return list(await asyncio.gather(*(speak(l10n.Localisation(lang=lang))
                                           for lang in ("fr", "de", "es", "en"))))

    assert asyncio.run(both()) == ["Approuver", "Genehmigen", "Aprobar", "Approve"]
