"""Jinja2 templates of the bot's e-mails and pages: the defaults in mail/templates/, each
overridable by an admin who puts a file of the same name in `<data dir>/templates/`.

A mail is three templates: `<name>.subject.j2` (one line), `<name>.txt.j2` (text part) and
`<name>.html.j2` (HTML part, autoescaped). A page is `page_<name>.html.j2`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, Environment, FileSystemLoader, StrictUndefined, select_autoescape

from timebot.stages import stage_label
from timebot.summary import hours

DEFAULTS = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class RenderedMail:
    subject: str
    text: str
    html: str


def _day(value: Any) -> str:
    return f"{value:%a %d %b}"


class Templates:
    def __init__(self, data_dir: Path | None) -> None:
        loaders = []
        if data_dir is not None:
            loaders.append(FileSystemLoader(str(data_dir / "templates")))
        loaders.append(FileSystemLoader(str(DEFAULTS)))
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

    def mail(self, name: str, **context: Any) -> RenderedMail:
        subject = self.html.get_template(f"{name}.subject.j2").render(**context)
        return RenderedMail(
            subject=" ".join(subject.split()),
            text=self.html.get_template(f"{name}.txt.j2").render(**context).strip() + "\n",
            html=self.html.get_template(f"{name}.html.j2").render(**context),
        )

    def page(self, name: str, **context: Any) -> str:
        return self.html.get_template(f"page_{name}.html.j2").render(**context)
