"""Extract the fronts' texts and bring each catalog (timebot/l10n/locale/<lang>/…/timebot.po)
up to date: new texts are added untranslated (tests/timebot/l10n/test_l10n.py then fails until
they are translated), texts no longer used are dropped. Run from the repository root:

    python scripts/update_catalogs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from babel.messages.catalog import Catalog  # noqa: E402
from babel.messages.extract import extract_from_dir  # noqa: E402
from babel.messages.pofile import read_po, write_po  # noqa: E402

from timebot.l10n.settings import LANGUAGES  # noqa: E402
from timebot.l10n.texts import catalog_path  # noqa: E402

SOURCES = ("mail", "bot", "web", "timebot")
METHODS = [("**.py", "python"), ("**.j2", "jinja2.ext:babel_extract"),
           ("**.html", "jinja2.ext:babel_extract")]
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}


def extracted() -> Catalog:
    """Every text the fronts mark for translation (the English source)."""
    catalog = Catalog(domain="timebot")
    for folder in SOURCES:
        for filename, lineno, message, _comments, _context in extract_from_dir(
                str(ROOT / folder), METHODS, KEYWORDS):
            catalog.add(message, locations=[(f"{folder}/{filename}", lineno)])
    return catalog


def main() -> None:
    template = extracted()
    for lang in LANGUAGES[1:]:
        path = catalog_path(lang)
        if path.is_file():
            with path.open("rb") as source:
                catalog = read_po(source, locale=lang, domain="timebot")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            catalog = Catalog(locale=lang, domain="timebot")
        created = catalog.creation_date  # kept: an unchanged catalog stays byte-identical
        catalog.update(template, no_fuzzy_matching=True)
        catalog.creation_date = created
        catalog.obsolete.clear()
        catalog.project, catalog.version, catalog.fuzzy = "timebot", "", False
        catalog.msgid_bugs_address = ""
        catalog.copyright_holder = catalog.language_team = catalog.last_translator = ""
        with path.open("wb") as target:
            write_po(target, catalog, width=100, omit_header=False, include_previous=False)
        missing = [m.id for m in catalog if m.id and not untranslated_ok(m.string)]
        print(f"{path.relative_to(ROOT)}: {len(catalog)} texts, {len(missing)} untranslated")


def untranslated_ok(string: str | tuple[str, ...]) -> bool:
    return all(string) if isinstance(string, tuple) else bool(string)


if __name__ == "__main__":
    main()
