"""Reading rates: the SvcBilling / SvcCost fields, the `billings` / `costs` attributes of
organisations, tags, projects and persons (the entity's own rates, else the ones it inherits,
with `path` naming where they come from). Without the Billing rates permission
(service/access/permissions.py) the rate fields are refused (omitted, listed in permissionsErrors).
"""

from __future__ import annotations

from typing import Any

from ariadne import ObjectType
from sqlalchemy import select

from service.graphql.context import RequestContext
from service.graphql.fastpath import plain
from service.models import Person, Project, Tag
from service.rates import rules
from service.rates.models import RATE_BILLING, RATE_COST, Rate
from service.rates.store import (
    collection_of,
    load_book,
    require_view_rates,
)

billing_type = ObjectType("SvcBilling")
cost_type = ObjectType("SvcCost")

_MODELS: dict[str, Any] = {rules.TAGS: Tag, rules.PROJECTS: Project, rules.PERSONS: Person}
_REFERENCE_TYPES = {
    rules.ORGANISATIONS: "organisation", rules.TAGS: "tag", rules.PROJECTS: "project",
    rules.PERSONS: "person",
}


async def _book(context: RequestContext, rate_type: str) -> tuple[rules.RateBook, dict[str, Rate]]:
    """The organisation's rates of a type, loaded once per request."""
    key = f"_rate_book_{rate_type}"
    cached = getattr(context, key, None)
    if cached is None:
        cached = await load_book(context.session, context.organisation, rate_type)
        setattr(context, key, cached)
    return cached  # type: ignore[no-any-return]


async def _name(context: RequestContext, place: rules.Place) -> str:
    if place.collection == rules.ORGANISATIONS:
        return context.organisation.name
    entity = await context.session.get(_MODELS[place.collection], place.id)
    return str(entity.name) if entity is not None else ""


async def attribute(context: RequestContext, rate_type: str, place: rules.Place) -> dict[str, Any]:
    await require_view_rates(context)
    book, rows = await _book(context, rate_type)
    found, rates = rules.inherited(book, rules.inheritance_places(book, place))
    if found is None:
        return {"value": [], "path": []}
    return {
        "value": [rows[r.id] for r in rates],
        "path": [{"id": found.id, "collection": found.collection,
                  "name": await _name(context, found)}],
    }


def _bind_attributes(type_name: str, collection: str) -> ObjectType:
    bindable = ObjectType(type_name)

    async def billings(entity: Any, info: Any) -> dict[str, Any]:
        return await attribute(info.context, RATE_BILLING, rules.Place(collection, entity.id))

    async def costs(entity: Any, info: Any) -> dict[str, Any]:
        return await attribute(info.context, RATE_COST, rules.Place(collection, entity.id))

    bindable.set_field("billings", billings)
    bindable.set_field("costs", costs)
    return bindable


async def _entities(context: RequestContext, model: Any, ids: list[str]) -> dict[str, Any]:
    if not ids:
        return {}
    rows = await context.session.scalars(
        select(model).where(model.organisation_id == context.org_id, model.id.in_(ids))
    )
    return {row.id: row for row in rows.unique()}


def _split_resolver(split_type: str, key: str, model: Any) -> Any:
    async def resolve(rate: Rate, info: Any) -> list[dict[str, Any]]:
        if rate.split_type != split_type:
            return []
        found = await _entities(info.context, model, [row.entity_id for row in rate.splits])
        return [
            {key: found[row.entity_id], "nonBillable": row.non_billable,
             "amount": {"value": row.value, "currency": row.currency}}
            for row in rate.splits
            if row.entity_id in found
        ]

    return resolve


@plain
def _entity(rate: Rate, _info: Any) -> dict[str, Any]:
    return {"id": rate.entity_id, "type": _REFERENCE_TYPES[collection_of(rate)]}


@plain
def _amount(rate: Rate, _info: Any) -> dict[str, Any]:
    return {"value": rate.value, "currency": rate.currency}


@plain
def _repeat(rate: Rate, _info: Any) -> dict[str, Any]:
    return {
        "occurrence": rate.repeat_occurrence,
        "frequency": rate.repeat_frequency,
        "weekPattern": rate.repeat_week_pattern,
        "monthPattern": rate.repeat_month_pattern,
        # SvcTime! in the reference: without an end date, the From date (endTimeEnabled false).
        "endTime": rate.repeat_end_ms if rate.repeat_end_ms is not None else rate.start_ms,
        "endTimeEnabled": rate.repeat_end_ms is not None,
    }


for _bindable in (billing_type, cost_type):
    _bindable.set_field("entity", _entity)
    _bindable.set_field("amount", _amount)
    _bindable.set_field("repeat", _repeat)
    _bindable.set_field("startTime", plain(lambda rate, _info: rate.start_ms))
    _bindable.set_field("splitType", plain(lambda rate, _info: rate.split_type))
    _bindable.set_field("repeatEnabled", plain(lambda rate, _info: rate.repeat_enabled))
    _bindable.set_field("personSplit", _split_resolver(rules.SPLIT_PERSONS, "person", Person))
    _bindable.set_field("projectSplit", _split_resolver(rules.SPLIT_PROJECTS, "project", Project))
    _bindable.set_field("tagSplit", _split_resolver(rules.SPLIT_TAGS, "tag", Tag))


BINDABLES = [
    billing_type,
    cost_type,
    _bind_attributes("SvcOrganisation", rules.ORGANISATIONS),
    _bind_attributes("SvcTag", rules.TAGS),
    _bind_attributes("SvcProject", rules.PROJECTS),
    _bind_attributes("SvcPerson", rules.PERSONS),
]
