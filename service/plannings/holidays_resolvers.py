"""Public holidays: the country calendars (getHolidayCountryCodes, getHolidays), and the
calendar of the organisation, a tag or a person (edited by admins; the `publicHolidays`
attribute is inherited person > tag > organisation). Loading a country's holidays is
rate-limited per person (service/rate_limit.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ariadne import MutationType, ObjectType, QueryType

from plumbing.ids import new_id
from service import rate_limit
from service.access import SETTINGS, requirer
from service.errors import BadInput, NotFound, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Organisation, Person, Tag
from service.organisation import Resolved, own_value, resolve, set_value
from service.plannings import holiday_rules as hol
from service.plannings.schedule_plan import PUBLIC_HOLIDAYS

require_permission = requirer(SETTINGS)

query = QueryType()
mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")
tag_type = ObjectType("SvcTag")
person_type = ObjectType("SvcPerson")
calendar_type = ObjectType("SvcPublicHolidays")

LOADING = "loading public holidays"


def _limit(context: RequestContext) -> None:
    rate_limit.hit(LOADING, context.org_id, context.person.id, context.now_ms)


@query.field("getHolidayCountryCodes")
def resolve_country_codes(_root: Any, _info: Any, code: str | None = None) -> list[Any]:
    return hol.country_codes(code)


@query.field("getHolidays")
def resolve_holidays(_root: Any, info: Any, code: str, lang: str | None = None) -> list[Any]:
    """The country's holidays of this year (UTC)."""
    context: RequestContext = info.context
    country = hol.check_code(code)
    language = hol.check_lang(country, lang)
    _limit(context)
    year = datetime.fromtimestamp(context.now_ms / 1000, UTC).year
    return [h.as_graphql() for h in hol.generated(country, language, year)]


@calendar_type.field("holidays")
def resolve_calendar_holidays(value: dict[str, Any], info: Any,
                              year: int | None = None) -> list[Any]:
    context: RequestContext = info.context
    if year is None:
        year = datetime.fromtimestamp(context.now_ms / 1000, UTC).year
    if not 1900 <= year <= 2200:
        raise BadInput("year", "must be from 1900 to 2200")
    return [h.as_graphql() for h in hol.calendar_holidays(value, year)]


def _attribute(resolved: Resolved) -> dict[str, Any]:
    return {"value": resolved.value, "path": resolved.path}


@organisation_type.field("publicHolidays")
def resolve_org_calendar(organisation: Organisation, _info: Any) -> Any:
    return _attribute(own_value(organisation, "organisations", PUBLIC_HOLIDAYS))


def _tag_resolved(context: RequestContext, tag: Tag) -> Resolved:
    own = own_value(tag, "tags", PUBLIC_HOLIDAYS)
    if own.value is not None:
        return own
    return own_value(context.organisation, "organisations", PUBLIC_HOLIDAYS)


@tag_type.field("publicHolidays")
def resolve_tag_calendar(tag: Tag, info: Any) -> Any:
    return _attribute(_tag_resolved(info.context, tag))


@person_type.field("publicHolidays")
async def resolve_person_calendar(person: Person, info: Any) -> Any:
    context: RequestContext = info.context
    if not await context.can_access_person_data(person.id):
        raise PermissionDenied("only the person, their managers and administrators see this")
    return _attribute(await resolve(context.session, context.organisation, person,
                                        PUBLIC_HOLIDAYS))


# --- editing a calendar ---------------------------------------------------------------------

Entity = Organisation | Tag | Person


async def _entity(context: RequestContext, target: str, entity_id: str | None) -> Entity:
    require_permission(context, "edit public holidays")
    if target == "Person":
        return await get_in_org(context.session, Person, context.org_id, entity_id, "id",
                                "person")
    if target == "Tag":
        return await get_in_org(context.session, Tag, context.org_id, entity_id, "id", "tag")
    return context.organisation


async def _calendar(context: RequestContext, entity: Entity) -> dict[str, Any]:
    """The entity's own calendar, started from the one it inherits when it has none."""
    own = (entity.settings or {}).get(PUBLIC_HOLIDAYS)
    if own is not None:
        return copy.deepcopy(dict(own))
    if isinstance(entity, Person):
        inherited = (await resolve(context.session, context.organisation, entity,
                                       PUBLIC_HOLIDAYS)).value
    elif isinstance(entity, Tag):
        inherited = _tag_resolved(context, entity).value
    else:
        inherited = None
    return copy.deepcopy(dict(inherited or {"code": "", "lang": ""}))


async def edit_calendar(context: RequestContext, target: str, entity_id: str | None,
                        code: str | None, lang: str | None) -> Entity:
    """Loads a country's calendar (null code: the entity inherits again)."""
    entity = await _entity(context, target, entity_id)
    if code is None or code == "":
        set_value(entity, PUBLIC_HOLIDAYS, None)
        return entity
    country = hol.check_code(code)
    language = hol.check_lang(country, lang)
    _limit(context)
    calendar = await _calendar(context, entity)
    if calendar.get("code") != country:
        calendar["edits"] = {}
    calendar.update(code=country, lang=language)
    set_value(entity, PUBLIC_HOLIDAYS, calendar)
    return entity


def _check_name(name: str, argument: str) -> str:
    value = name.strip()
    if not value:
        raise BadInput(argument, "must not be empty")
    return value


async def add_holiday(context: RequestContext, target: str, entity_id: str | None,
                      holiday: dict[str, Any]) -> Entity:
    entity = await _entity(context, target, entity_id)
    name = _check_name(str(holiday.get("name") or ""), "holiday.name")
    calendar = await _calendar(context, entity)
    custom = list(calendar.get("custom") or [])
    holiday_id = holiday.get("id") or new_id()
    if any(item["id"] == holiday_id for item in custom):
        raise BadInput("holiday.id", "the calendar already has a holiday with this id")
    day = hol.day_of_ms(int(holiday["date"]))
    custom.append({"id": holiday_id, "name": name, "date": hol.day_ms(day),
                   "disabled": bool(holiday.get("disabled"))})
    calendar["custom"] = custom
    set_value(entity, PUBLIC_HOLIDAYS, calendar)
    return entity


async def change_holiday(context: RequestContext, target: str, entity_id: str | None,
                         holiday_id: str, change: Callable[[dict[str, Any]], None]) -> Entity:
    """Applies `change` to a holiday's own entry (custom) or its edits (generated)."""
    entity = await _entity(context, target, entity_id)
    calendar = await _calendar(context, entity)
    for item in calendar.get("custom") or []:
        if item["id"] == holiday_id:
            change(item)
            if item.get("removed"):
                calendar["custom"] = [c for c in calendar["custom"] if c["id"] != holiday_id]
            set_value(entity, PUBLIC_HOLIDAYS, calendar)
            return entity
    code = str(calendar.get("code") or "")
    if not code or hol.date_of_id(code, holiday_id) is None:
        raise NotFound("holidayId", holiday_id, "public holiday")
    edits = dict(calendar.get("edits") or {})
    entry = dict(edits.get(holiday_id) or {})
    change(entry)
    edits[holiday_id] = entry
    calendar["edits"] = edits
    set_value(entity, PUBLIC_HOLIDAYS, calendar)
    return entity


def _bind(target: str) -> None:
    prefix = "" if target == "Organisation" else "id"

    def entity_id(kwargs: dict[str, Any]) -> str | None:
        return kwargs.get(prefix) if prefix else None

    async def edit(_root: Any, info: Any, **kw: Any) -> Entity:
        return await edit_calendar(info.context, target, entity_id(kw), kw.get("code"),
                                   kw.get("lang"))

    async def add(_root: Any, info: Any, holiday: dict[str, Any], **kw: Any) -> Entity:
        return await add_holiday(info.context, target, entity_id(kw), holiday)

    async def remove(_root: Any, info: Any, holidayId: str, **kw: Any) -> Entity:
        return await change_holiday(info.context, target, entity_id(kw), holidayId,
                                    lambda item: item.update(removed=True))

    async def rename(_root: Any, info: Any, holidayId: str, name: str, **kw: Any) -> Entity:
        value = _check_name(name, "name")
        return await change_holiday(info.context, target, entity_id(kw), holidayId,
                                    lambda item: item.update(name=value))

    async def move(_root: Any, info: Any, holidayId: str, date: int, **kw: Any) -> Entity:
        day = hol.day_ms(hol.day_of_ms(date))
        return await change_holiday(info.context, target, entity_id(kw), holidayId,
                                    lambda item: item.update(date=day))

    async def disable(_root: Any, info: Any, holidayId: str, disabled: bool,
                      **kw: Any) -> Entity:
        return await change_holiday(info.context, target, entity_id(kw), holidayId,
                                    lambda item: item.update(disabled=disabled))

    mutation.set_field(f"edit{target}PublicHolidays", edit)
    mutation.set_field(f"add{target}PublicHoliday", add)
    mutation.set_field(f"remove{target}PublicHoliday", remove)
    mutation.set_field(f"edit{target}PublicHolidayName", rename)
    mutation.set_field(f"edit{target}PublicHolidayDate", move)
    mutation.set_field(f"edit{target}PublicHolidayDisabled", disable)


for _target in ("Organisation", "Tag", "Person"):
    _bind(_target)


BINDABLES = [query, mutation, organisation_type, tag_type, person_type, calendar_type]
