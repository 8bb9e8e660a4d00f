"""Read an out-of-office auto-reply as a fact: the approver is away, until the date it states.

`read_away(subject, body, received_date, verdict=…)` returns an `Away` (its `until` the return
date, None when the text states none) or None when the message is not an out-of-office reply.
Pure: the text and the date it was received decide.

Whether a machine wrote it is the loop guard's verdict (mail.inbound.loop_guard), not decided again
here: pass the LoopRefusal it returned; kind "auto-reply" is a machine's reply, any other kind
(a bounce, a list, our own mail) or no refusal at all (a person wrote it) is not read as an
absence. Without a verdict, the subject alone is judged by the loop guard's own auto-reply
subjects (mail.reading.machine_signs.AUTO_SUBJECT). A machine's reply is an absence only when its
text says so (out of office, on leave, absent, abwesend, de vacaciones …): an autoresponder that
acknowledges a ticket is not, unless its headers say a vacation program wrote it (iCloud's
`X-Apple-Action: VACATION`, Sieve's vacation: `vacation=True`).

The return date, in English, French, German and Spanish: "until 2 December", "back on Monday
7/12", "jusqu'au 2 décembre", "bis zum 02.12.2026", "hasta el 2 de diciembre", ISO dates,
"December 2nd, 2026". A date after a cue word ("until", "back", "return", "jusqu'au",
"retour", "bis", "zurück", "wieder", "hasta", "regreso", "volveré" …) wins, a date without a
year being the next such date on or after the day the reply was received; otherwise the latest
date in the text, a yearless one read as the nearest (within 120 days back: "away from 20
November to 4 December" received on 26 November ends on 4 December). A numeric date that reads
both ways (7/12) is the one a stated weekday confirms, else the sooner one still to come. A bare
weekday after a cue ("back on Monday") is the next such day after the day received. A range
is read to its end ("December 3-13", "du 3 au 13 décembre", "vom 3. bis 13. Dezember", "ab
dem 3. Dezember bis zum 13. Dezember"), also when received inside it. A stated
date before the day received (a forgotten auto-reply) gives an unknown return. Quoted lines and
what follows an "Original Message" separator are not read (the review mail quoted back would
offer its period's dates); only the first 4000 characters of the text are read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from mail.inbound.loop_guard import LoopRefusal
from mail.reading import machine_signs as signs

__all__ = ["Away", "read_away"]

_MAX_CHARS = 4000
_RECENT_DAYS = 120


@dataclass(frozen=True)
class Away:
    until: date | None  # the return date the reply states; None: not stated


def _plain(text: str) -> str:
    """Lower-cased, accents removed (décembre -> decembre, März -> marz), ß -> ss."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


_MONTHS: dict[str, int] = {}
for _number, _names in enumerate((
    "january jan janvier janv januar jan. enero ene",
    "february feb febr fevrier fevr fev februar feber febrero",
    "march mar mars marz maerz marzo",
    "april apr avril avr abril abr",
    "may mai mayo",
    "june jun juin juni junio",
    "july jul juillet juil juli julio",
    "august aug aout agosto ago",
    "september sept sep septembre septiembre setiembre",
    "october oct octobre oktober okt octubre",
    "november nov novembre noviembre",
    "december dec decembre dezember dez diciembre dic",
), start=1):
    for _name in _names.split():
        _MONTHS[_name.rstrip(".")] = _number
_WEEKDAYS: dict[str, int] = {}
for _number, _names in enumerate((
    "monday mon lundi montag mo lunes",
    "tuesday tue tues mardi dienstag di martes",
    "wednesday wed mercredi mittwoch mi miercoles",
    "thursday thu thurs jeudi donnerstag do jueves",
    "friday fri vendredi freitag fr viernes",
    "saturday sat samedi samstag sonnabend sa sabado",
    "sunday sun dimanche sonntag so domingo",
)):
    for _name in _names.split():
        _WEEKDAYS[_name] = _number
# Two-letter German abbreviations (mo, di, so …) are also words: only the long forms stand
# alone after a cue ("zurück am Montag"); the short ones count only right before a date.
_LONG_WEEKDAYS = {name: day for name, day in _WEEKDAYS.items() if len(name) > 3}


def _alternation(names: dict[str, int]) -> str:
    return "|".join(sorted(names, key=len, reverse=True))


_MONTH = _alternation(_MONTHS)
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th|er|o|\.)?\s*(?:of\s+|de\s+)?({_MONTH})\b\.?"
    rf"(?:,?\s*(?:de\s+)?(\d{{4}})\b)?"
)
# A range's connector: "December 3-13", "3 décembre jusqu'au 13 décembre", "3. bis 13."
_TO = (r"(?:-|\u2013|\u2014|to|till|until|through|thru|and|au|jusqu['\u2019]\s*(?:au|a)"
       r"|bis(?:\s+zum)?|al|hasta(?:\s+el)?)")
# "December 3-13": the range's last day, in the month of its first (or the next month's:
# "December 28 - 4"); not a time ("December 3 - 14:00") nor another date's day ("- 13.12.").
_MONTH_DAY = re.compile(
    rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"(?:\s*{_TO}\s*(\d{{1,2}})(?:st|nd|rd|th)?\b(?![:./]?\d|\s*(?:of\s+)?(?:{_MONTH})\b))?"
    rf"(?:,?\s*(\d{{4}})\b)?"
)
_CONNECTED = re.compile(rf"\s*{_TO}\s*")
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
# 02.12.2026, 2/12/26, 2.12. (the trailing dot marks a German date), 7/12
_NUMERIC = re.compile(r"\b(\d{1,2})([./])(\d{1,2})(?:\2(\d{4}|\d{2})\b|(\.))?(?![\d/])")
_WEEKDAY_BEFORE = re.compile(rf"\b({_alternation(_WEEKDAYS)})\b\.?,?\s*(?:the\s+|le\s+|den\s+"
                             r"|el\s+|der\s+)?$")
_LONG_WEEKDAY = re.compile(rf"\b({_alternation(_LONG_WEEKDAYS)})\b")

_CUE = re.compile(
    r"\b(?:until|till|til|through|thru|back|return(?:ing|s)?|returned|resume|resuming"
    r"|available\s+(?:again\s+)?(?:from|on)|in\s+the\s+office\s+(?:from|on)"
    r"|jusqu['\u2019]\s*(?:au|a|le)|jusque|retour|reviens|reviendrai|rentre|a\s+partir\s+du"
    r"|bis|zuruck|zurueck|wieder|ab\s+dem|ab"
    r"|hasta|regreso|regresare|volvere|de\s+vuelta|a\s+partir\s+del)\b"
)
_AWAY = re.compile(
    r"out\s+of\s+(?:the\s+)?office|\booo\b|\baway\b|\bon\s+(?:\w+\s+)?leave\b|\bvacation\b"
    r"|\bholidays?\b|\bannual\s+leave\b|not\s+in\s+the\s+office|\bout\s+until\b"
    r"|limited\s+access\s+to\s+(?:my\s+)?e-?mail|\bbusiness\s+trip\b|\btravell?ing\b"
    r"|\babsente?s?\b|\babsence\b|\bconges?\b|\bvacances\b|hors\s+du\s+bureau"
    r"|\babwesen|nicht\s+im\s+buro|nicht\s+im\s+buero|\burlaub|ausser\s+haus|\bdienstreise\b"
    r"|nicht\s+erreichbar|\bausente\b|fuera\s+de\s+(?:la\s+)?oficina|\bestare\s+fuera\b"
    r"|\bvacaciones\b|\bpermiso\b|\bde\s+viaje\b"
    r"|\b(?:i['\u2019]?(?:ll|m| will| am)\s+be\s+|i['\u2019]m\s+)back\b|\bwill\s+return\b"
    r"|\bde\s+retour\b|wieder\s+im\s+bu|\bregresare\b|\bvolvere\b"
)
_QUOTE_START = re.compile(
    r"^(?:-{2,}\s*(?:original\s+message|ursprungliche\s+nachricht|message\s+d['\u2019]origine"
    r"|mensaje\s+original)|_{5,}|(?:from|von|de|envoye|gesendet|sent)\s*:.*@"
    r"|on\s.{0,120}\swrote:|le\s.{0,120}\sa\s+ecrit\s*:|am\s.{0,120}\sschrieb\b"
    r"|el\s.{0,120}\sescribio:)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class _Found:
    start: int
    dates: tuple[date, ...]  # the readings, in preference order
    end: int = 0  # where its text ends


def _valid(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _resolve(month: int, day: int, year: int | None, received: date) -> date | None:
    """The date; without a year the next one on or after `received`."""
    if year is not None:
        if year < 100:
            year += 2000
        return _valid(year, month, day)
    for offset in range(0, 9):  # 29 February: the next leap year
        found = _valid(received.year + offset, month, day)
        if found is not None and found >= received:
            return found
    return None


def _weekday_before(text: str, start: int) -> int | None:
    match = _WEEKDAY_BEFORE.search(text[max(0, start - 16):start])
    return None if match is None else _WEEKDAYS[match.group(1)]


def _dates(text: str, received: date) -> list[_Found]:
    found: list[_Found] = []
    taken: list[tuple[int, int]] = []

    def add(match: re.Match[str], readings: Sequence[date | None]) -> None:
        if any(start < match.end() and match.start() < end for start, end in taken):
            return
        dates = [reading for reading in readings if reading is not None]
        weekday = _weekday_before(text, match.start())
        if weekday is not None and any(reading.weekday() == weekday for reading in dates):
            dates = [reading for reading in dates if reading.weekday() == weekday]
        if dates:
            taken.append((match.start(), match.end()))
            found.append(_Found(match.start(), tuple(dates), match.end()))

    for match in _ISO.finditer(text):
        add(match, [_valid(int(match[1]), int(match[2]), int(match[3]))])
    for match in _DAY_MONTH.finditer(text):
        add(match, [_resolve(_MONTHS[match[2]], int(match[1]),
                             int(match[3]) if match[3] else None, received)])
    for match in _MONTH_DAY.finditer(text):
        month, day, year = _MONTHS[match[1]], int(match[2]), int(match[4]) if match[4] else None
        if match[3] is not None and int(match[3]) < day:  # into the next month
            month, year = month % 12 + 1, year + 1 if year is not None and month == 12 else year
        add(match, [_resolve(month, int(match[3] or day), year, received)])
    for match in _NUMERIC.finditer(text):
        first, second = int(match[1]), int(match[3])
        year = int(match[4]) if match[4] else None
        readings: Sequence[date | None]
        if match[2] == "." or (year is not None and match[2] == "/" and first > 12):
            readings = [_resolve(second, first, year, received)]  # day first
        else:  # 7/12: both readings, the sooner first
            both = {_resolve(second, first, year, received),
                    _resolve(first, second, year, received)}
            known: list[date] = [reading for reading in both if reading is not None]
            known.sort(key=lambda day: (day < received, day))
            readings = known
        if match[2] == "." and match[4] is None and match[5] is None:
            continue  # 9.30: a time, not a date
        add(match, readings)
    return sorted(found, key=lambda item: item.start)


def _range_end(text: str, found: list[_Found], first: _Found) -> date:
    """The date a cue names, or the end of the range it begins ("ab dem 3. Dezember bis zum
    13. Dezember", "à partir du 3 décembre jusqu'au 13 décembre")."""
    later = [item for item in found if item.start >= first.end]
    if later and later[0].start - first.end <= 40 \
            and _CONNECTED.fullmatch(text, first.end, later[0].start):
        # (its first day, without a year, may be read a year ahead when received inside it)
        return later[0].dates[0]
    return first.dates[0]


def _next_weekday(weekday: int, received: date) -> date:
    return received + timedelta(days=(weekday - received.weekday() - 1) % 7 + 1)


def _return_date(text: str, received: date) -> date | None:
    found = _dates(text, received)
    cues = [match.end() for match in _CUE.finditer(text)]
    chosen: date | None = None
    for cue in cues:
        after = [item for item in found if cue <= item.start <= cue + 60]
        if after:
            chosen = _range_end(text, found, after[0])
            break
        weekday = _LONG_WEEKDAY.match(text, cue, cue + 20) or _LONG_WEEKDAY.search(
            text[cue:cue + 16])
        if weekday is not None and chosen is None:
            chosen = _next_weekday(_WEEKDAYS[weekday.group(1)], received)
            break
    if chosen is None:
        # No cue: the latest date, a range's first day read as the recent past ("from 20
        # November to 4 December" received on 26 November)
        recent = _dates(text, received - timedelta(days=_RECENT_DAYS))
        chosen = max((item.dates[0] for item in recent), default=None)
    if chosen is not None and chosen < received:
        return None  # a forgotten auto-reply: its date has passed
    return chosen


def _unquoted(body: str) -> str:
    body = body[:_MAX_CHARS]
    lines = [line for line in body.splitlines() if not line.lstrip().startswith(">")]
    text = _plain("\n".join(lines))
    cut = _QUOTE_START.search(text)
    return text if cut is None else text[:cut.start()]


def read_away(
    subject: str, body: str, received_date: date, *, verdict: LoopRefusal | None = None,
    vacation: bool = False,
) -> Away | None:
    """The absence an out-of-office auto-reply states, or None (see the module docstring).

    `verdict`: what the loop guard said of the message (None: nothing, or not asked — then
    the subject alone tells a machine's reply). `vacation`: its headers say a vacation program
    wrote it (mail.reading.machine_signs.vacation_reply): an absence whatever its words."""
    subject = subject[:300]
    machine = (
        verdict.kind == "auto-reply" if verdict is not None
        else vacation or bool(signs.AUTO_SUBJECT.match(subject))
    )
    if not machine:
        return None
    text = _unquoted(body)
    plain_subject = _plain(subject)
    if not (vacation or _AWAY.search(plain_subject) or _AWAY.search(text)):
        return None
    until = _return_date(text, received_date)
    if until is None:
        until = _return_date(plain_subject, received_date)
    return Away(until)
