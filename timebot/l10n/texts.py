"""The texts in the person's language: gettext catalogs, one `.po` per language under
`timebot/l10n/locale/<lang>/LC_MESSAGES/timebot.po` (English is the source: no catalog).

The `.po` files are the only form committed: each is compiled in memory the first time its
language is used (Babel's `read_po` + `write_mo`), so a clean clone needs no build step.
`python scripts/update_catalogs.py` extracts the texts of the fronts (Python `_`/`ngettext`,
Jinja `{% trans %}`) and adds the new ones to each catalog; tests/timebot/l10n/test_l10n.py fails
while any is untranslated.

The language in force is a context variable, set by the front around what it writes for one
person (`with using(localisation): …`): asyncio gives every task its own copy, so two people
answered at once never see each other's language. A handler that learns whom it answers
only half-way calls `switch` (or `loading.speak_to`) inside the `using` block its caller
opened.
"""

from __future__ import annotations

import gettext
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from io import BytesIO
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import Translations

from timebot.l10n.settings import ENGLISH, Localisation

CATALOGS = Path(__file__).resolve().parent / "locale"
DOMAIN = "timebot"

_CURRENT: ContextVar[Localisation] = ContextVar("timebot_localisation", default=ENGLISH)


def catalog_path(lang: str) -> Path:
    return CATALOGS / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(lang: str) -> gettext.NullTranslations:
    """The compiled catalog of `lang` (English, or a language without one: the source texts)."""
    path = catalog_path(lang)
    if lang == "en" or not path.is_file():
        return gettext.NullTranslations()
    with path.open("rb") as source:
        catalog = read_po(source, locale=lang, domain=DOMAIN)
    compiled = BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return Translations(fp=compiled, domain=DOMAIN)


def current() -> Localisation:
    """The localisation of the person being written to (English if none was set)."""
    return _CURRENT.get()


@contextmanager
def using(local: Localisation) -> Iterator[Localisation]:
    token = _CURRENT.set(local)
    try:
        yield local
    finally:
        _CURRENT.reset(token)


def switch(local: Localisation) -> None:
    """Make `local` the localisation in force for the rest of the enclosing `using` block
    (a handler that learns whom it answers only half-way; the block's end restores the
    previous one)."""
    _CURRENT.set(local)


def translate(local: Localisation, message: str) -> str:
    """`message` in `local`'s language (for the pure formatters, given their localisation)."""
    return translations(local.lang).gettext(message)


def N_(message: str) -> str:
    """Marks a text for the catalogs where it is written; `_` translates it where it is used."""
    return message


def _(message: str) -> str:
    return translations(_CURRENT.get().lang).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(_CURRENT.get().lang).ngettext(singular, plural, n)
