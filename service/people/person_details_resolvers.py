"""A person's details: name, e-mail, role, start date, colour and interface language. An
administrator edits them (a person may change their own language); a role change never leaves
the organisation without an active administrator."""

from __future__ import annotations

import re
from typing import Any

from ariadne import MutationType

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.models import Person
from service.people.checks import (
    active_role_by_id,
    check_email_free,
    ensure_an_admin_remains,
    is_active_admin,
    person_by_id,
    require_admin,
)
from service.people.models import ROLE_ADMIN
from service.value_words import described

mutation = MutationType()

_LANG_RE = re.compile(r"^[a-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})?$")


@mutation.field("editPersonName")
async def resolve_edit_person_name(_root: Any, info: Any, id: str, name: str) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await person_by_id(context, id)
    person.name = name
    return person


@mutation.field("editPersonEmail")
async def resolve_edit_person_email(_root: Any, info: Any, id: str, email: str) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await person_by_id(context, id)
    await check_email_free(context, email, except_id=person.id)
    person.email = email
    return person


@mutation.field("editPersonRole")
async def resolve_edit_person_role(_root: Any, info: Any, id: str, roleId: str) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await person_by_id(context, id)
    role = await active_role_by_id(context, roleId)
    if is_active_admin(person) and role.kind != ROLE_ADMIN:
        await ensure_an_admin_remains(context, {person.id}, "change the role")
    person.role_id = role.id
    person.role = role
    return person


@mutation.field("editPersonStartDate")
async def resolve_edit_person_start_date(_root: Any, info: Any, id: str, startDate: int) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await person_by_id(context, id)
    if startDate < 0:
        raise BadInput("startDate", "must not be before 1970-01-01")
    person.start_date_ms = startDate
    return person


@mutation.field("editPersonColor")
async def resolve_edit_person_color(
    _root: Any, info: Any, id: str, color: str | None = None
) -> Person:
    context: RequestContext = info.context
    require_admin(context)
    person = await person_by_id(context, id)
    person.color = color
    return person


@mutation.field("editPersonLang")
async def resolve_edit_person_lang(_root: Any, info: Any, id: str, lang: str) -> Person:
    """An administrator, or the person themselves (their interface language)."""
    context: RequestContext = info.context
    if id != context.person.id:
        require_admin(context, "change another person's language")
    person = await person_by_id(context, id)
    value = lang.strip()
    if not _LANG_RE.match(value):
        raise BadInput("lang", "must be a language code such as 'en' or 'fr-CA', got "
                       f"{described(lang)}")
    language, _, region = value.replace("_", "-").partition("-")
    person.lang = f"{language}-{region.upper()}" if region else language
    return person


BINDABLES = [mutation]
