"""A mail rendered from the e-mail template an administrator set (`emailTemplates`: the one
that applies to the recipient, person > tag > organisation), else the built-in one.

The template is rendered in the sandbox of `plumbing.mail_templates` with the mail's values
only; one that fails (it names a value this mail lacks, it hits the sandbox) is logged and the
built-in mail goes instead: a broken template never stops a mail. `timebot templates preview`
shows a template with sample values before it is saved (the service refuses one that does not
render with them).
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import structlog

from mail.outbound.templating import RenderedMail
from plumbing.mail_templates import TemplateProblem, render
from timebot.notify.person_notify import PersonNotify

log = structlog.get_logger("mail.custom_mail")


def person_values(person: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": person.get("name") or "", "email": person.get("email") or ""}


def from_template(source: str, values: Mapping[str, Any], builtin: RenderedMail) -> RenderedMail:
    """The template rendered (TemplateProblem when it cannot be); the built-in subject when
    the template has no Subject line. The HTML part is the text, escaped."""
    rendered = render(source, values)
    body = html.escape(rendered.text)
    return RenderedMail(
        subject=rendered.subject or builtin.subject,
        text=rendered.text,
        html=f'<div style="white-space: pre-wrap">{body}</div>\n',
    )


def chosen(notify: PersonNotify, kind: str, values: Mapping[str, Any], builtin: RenderedMail,
           **where: Any) -> RenderedMail:
    """The mail of that kind from the recipient's template, or the built-in mail."""
    source = notify.templates.get(kind)
    if source is None:
        return builtin
    try:
        return from_template(source, values, builtin)
    except TemplateProblem as problem:
        log.warning("email_template_failed", kind=kind, line=problem.line,
                    error=problem.message, **where)
        return builtin
