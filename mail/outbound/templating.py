"""The e-mails' templates: the defaults in mail/outbound/templates/ (loaded as `timebot.templating`
loads every front's, an admin's `<data dir>/templates/` first).

A mail is three templates: `<name>.subject.j2` (one line), `<name>.txt.j2` (text part) and
`<name>.html.j2` (HTML part, autoescaped). Mail's own pages (GET /outbox) are
`page_<name>.html.j2`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from timebot.l10n import Localisation
from timebot.templating import Templates

DEFAULTS = Path(__file__).resolve().parent / "templates"


@dataclass(frozen=True)
class RenderedMail:
    subject: str
    text: str
    html: str


class MailTemplates(Templates):
    def __init__(self, data_dir: Path | None) -> None:
        super().__init__(DEFAULTS, data_dir)

    def mail(self, name: str, localisation: Localisation | None = None,
             **context: Any) -> RenderedMail:
        """In the reader's `localisation` (default: the one in force, `timebot.l10n`)."""
        subject = self.render(f"{name}.subject.j2", localisation, **context)
        return RenderedMail(
            subject=" ".join(subject.split()),
            text=self.render(f"{name}.txt.j2", localisation, **context).strip() + "\n",
            html=self.render(f"{name}.html.j2", localisation, **context),
        )
