"""Localisation of what the fronts say to a person (#24): their language (`lang`: en, fr,
de, es — the languages the reply reader understands) and the account's localisation settings
(date, time, number and duration formats, first day of the week, time zone).

- `settings.py`: `Localisation`, the value read over GraphQL (`LOCALISATION_FIELDS`,
  `localisation_of(person)`); a format nobody chose (its `path` is empty: the default) keeps
  timebot's house style, so output for people who chose nothing does not change.
- `formats.py`: pure formatting (Babel's CLDR data for names, numbers and plural forms).
- `texts.py`: the gettext catalogs (`timebot/l10n/locale/<lang>/LC_MESSAGES/timebot.po`,
  compiled in memory when first used: no build step) and the current person's language
  (`using(localisation)`, `_`, `ngettext`), which the Jinja templates and pure text builders
  read.
"""

from timebot.l10n.formats import (
    format_date,
    format_datetime,
    format_day,
    format_duration,
    format_entry_day,
    format_hours,
    format_number,
    format_period,
    format_time,
    week_start,
)
from timebot.l10n.settings import (
    ENGLISH,
    LANGUAGES,
    LOCALISATION_FIELDS,
    Localisation,
    language_of,
    localisation_of,
    reading_from_query,
    reading_query,
)
from timebot.l10n.texts import (
    N_,
    _,
    current,
    ngettext,
    switch,
    translate,
    translations,
    using,
)

__all__ = [
    "ENGLISH",
    "LANGUAGES",
    "LOCALISATION_FIELDS",
    "N_",
    "Localisation",
    "_",
    "current",
    "format_date",
    "format_datetime",
    "format_day",
    "format_duration",
    "format_entry_day",
    "format_hours",
    "format_number",
    "format_period",
    "format_time",
    "language_of",
    "localisation_of",
    "ngettext",
    "reading_from_query",
    "reading_query",
    "switch",
    "translate",
    "translations",
    "using",
    "week_start",
]
