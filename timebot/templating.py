"""Jinja2 templates of the fronts' e-mails and pages: each front keeps its defaults in its own
folder (mail/templates/, web/templates/links/), the partials they share (the page frame, a
timesheet's summary) sit in timebot/templates/, and an admin overrides any of them by putting
a file of the same name in `<data dir>/templates/`.

A page is `page_<name>.html.j2` (autoescaped, as is every `*.html.j2`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined, select_autoescape

from timebot.stages import stage_label
from timebot.summary import hours

SHARED = Path(__file__).resolve().parent / "templates"


def _day(value: Any) -> str:
    return f"{value:%a %d %b}"


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
        )
        self.html.filters["hours"] = hours
        self.html.filters["day"] = _day
        self.html.globals["stage_label"] = stage_label  # "stage 1 of 2", the one way

    def render(self, name: str, **context: Any) -> str:
        return self.html.get_template(name).render(**context)

    def page(self, name: str, **context: Any) -> str:
        return self.render(f"page_{name}.html.j2", **context)
