"""Jinja2 templates of the fronts' e-mails and pages: each front keeps its defaults in its own
folder (mail/outbound/templates/, web/templates/links/), the partials they share (the page frame, a
timesheet's summary) sit in timebot/templates/, and an admin overrides any of them by putting
a file of the same name in `<data dir>/templates/`.

A page is `page_<name>.html.j2` (autoescaped, as is every `*.html.j2`).

Templates speak the reader's language (`timebot.l10n`): `{% trans %}…{% endtrans %}` and
`_()` take the catalog of the localisation in force (`with l10n.using(…)` around the render),
and the filters `hours`, `day`, `date`, `number` and `period` its formats.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined, select_autoescape

from timebot import l10n
from timebot.stages import stage_label

SHARED = Path(__file__).resolve().parent / "templates"


def _day(value: Any) -> str:
    return l10n.format_day(value, l10n.current())


def _hours(ms: int) -> str:
    return l10n.format_duration(ms, l10n.current())


def _date(value: Any) -> str:
    return l10n.format_date(value, l10n.current())


def _number(value: float, digits: int = 2) -> str:
    return l10n.format_number(value, l10n.current(), digits=digits)


def _period(start_ms: int, end_ms: int, named: bool = True) -> str:
    return l10n.format_period(start_ms, end_ms, l10n.current(), named=named)


class Templates:
    """The templates of one front: `<data dir>/templates/` first, then `defaults`, then the
    shared partials."""

    def __init__(self, defaults: Path, data_dir: Path | None) -> None:
        loaders = []
        if data_dir is not None:
            loaders.append(FileSystemLoader(str(data_dir / "templates")))
        loaders.append(FileSystemLoader(str(defaults)))
        loaders.append(FileSystemLoader(str(SHARED)))
        self.html = Environment(
            loader=ChoiceLoader(loaders),
            autoescape=select_autoescape(enabled_extensions=("html.j2",), default=False),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=True,
            extensions=["jinja2.ext.i18n"],
        )
        self.html.install_gettext_callables(  # type: ignore[attr-defined]
            l10n._, l10n.ngettext, newstyle=True)
        self.html.globals["page_lang"] = lambda: l10n.current().lang
        self.html.filters["hours"] = _hours
        self.html.filters["day"] = _day
        self.html.filters["date"] = _date
        self.html.filters["number"] = _number
        self.html.filters["period"] = _period
        self.html.globals["stage_label"] = stage_label  # "stage 1 of 2", the one way

    def render(self, name: str, localisation: l10n.Localisation | None = None,
               **context: Any) -> str:
        """`localisation`: the reader's (default: the one in force, `l10n.using`)."""
        with l10n.using(localisation or l10n.current()):
            return self.html.get_template(name).render(**context)

    def page(self, name: str, localisation: l10n.Localisation | None = None,
             **context: Any) -> str:
        return self.render(f"page_{name}.html.j2", localisation, **context)
