"""The service's own mails from the e-mail template that applies to their recipient
(`emailTemplates`: person > tag > organisation), rendered in the sandbox of
`plumbing.mail_templates` with the mail's values only; the built-in text when none is set or
the template fails (logged)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.mail_templates import TemplateProblem, render
from service.models import Organisation, Person
from service.organisation.settings_cascade import effective
from service.organisation.settings_registry import BY_NAME, EMAIL_TEMPLATE

log = structlog.get_logger("service.templated_mail")


async def templated(session: AsyncSession, organisation: Organisation, person: Person,
                    kind: str, values: Mapping[str, Any], subject: str,
                    body: str) -> tuple[str, str]:
    """(subject, body) of a mail of that kind to the person."""
    setting = BY_NAME[(EMAIL_TEMPLATE, kind)]
    source = (await effective(session, organisation, "person", person, setting)).value
    if not source:
        return subject, body
    try:
        rendered = render(str(source), values)
    except TemplateProblem as problem:
        log.warning("email_template_failed", kind=kind, organisation=organisation.id,
                    line=problem.line, error=problem.message)
        return subject, body
    return rendered.subject or subject, rendered.text
