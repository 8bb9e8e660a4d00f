"""Reading rates: the SvcBilling / SvcCost fields, the `billings` / `costs` attributes of
organisations, tags, projects and persons (the entity's own rates, else the ones it inherits,
with `path` naming where they come from), and the roles' authorisations
(`SvcRole.authorisations`, `editRoleAuthorisations`) that grant the Billing rates permission.
Without that permission the rate fields are refused (omitted, listed in permissionsErrors).
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType
from sqlalchemy import delete, select

from service.errors import BadInput
from service.graphql.context import RequestContext
from service.graphql.fastpath import plain
from service.lookup import get_in_org
from service.models import Person, Project, Role, Tag
from service.models.rates import RATE_BILLING, RATE_COST, Rate, RoleAuthorisation
from service.rates_store import (
    KNOWN_AUTHORISATIONS,
    collection_of,
    load_book,
    require_view_rates,
)
from service.rules import rates as rules
from service.structure import require_admin

mutation = MutationType()
billing_type = ObjectType("SvcBilling")
cost_type = ObjectType("SvcCost")
role_type = ObjectType("SvcRole")

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


# -- role authorisations --------------------------------------------------------------------


async def _authorisations(context: RequestContext, role_id: str) -> list[RoleAuthorisation]:
    rows = await context.session.scalars(
        select(RoleAuthorisation)
        .where(RoleAuthorisation.organisation_id == context.org_id,
               RoleAuthorisation.role_id == role_id)
        .order_by(RoleAuthorisation.name)
    )
    return list(rows)


@role_type.field("authorisations")
async def resolve_role_authorisations(role: Role, info: Any) -> list[dict[str, Any]]:
    return [
        {"name": a.name, "targets": None, "view": list(a.view), "manage": list(a.manage)}
        for a in await _authorisations(info.context, role.id)
    ]


def _targets(value: Any, argument: str) -> list[str]:
    if value is None:
        return []
    if not all(isinstance(item, str) and item.strip() for item in value):
        raise BadInput(argument, "must list non-empty strings")
    return [item.strip() for item in value]


@mutation.field("editRoleAuthorisations")
async def resolve_edit_role_authorisations(
    _root: Any, info: Any, id: str, authorisations: list[dict[str, Any] | None]
) -> Role:
    """Replaces the role's authorisations. Known: billingRates (view: see rates and amounts;
    manage: edit them too). Administrators have every permission whatever their role says."""
    context: RequestContext = info.context
    require_admin(context, "edit roles")
    # Locked: two concurrent replacements run one after the other.
    role = await get_in_org(context.session, Role, context.org_id, id, "id", "role",
                            for_update=True)
    parsed: dict[str, tuple[list[str], list[str]]] = {}
    for index, item in enumerate(authorisations):
        where = f"authorisations[{index}]"
        if item is None:
            raise BadInput(where, "must not be null")
        name = str(item.get("name") or "").strip()
        if name not in KNOWN_AUTHORISATIONS:
            raise BadInput(f"{where}.name",
                           f"unknown permission {name!r}; known: {', '.join(KNOWN_AUTHORISATIONS)}")
        if name in parsed:
            raise BadInput(f"{where}.name", f"{name!r} is listed twice")
        parsed[name] = (_targets(item.get("view"), f"{where}.view"),
                        _targets(item.get("manage"), f"{where}.manage"))
    await context.session.execute(
        delete(RoleAuthorisation).where(RoleAuthorisation.organisation_id == context.org_id,
                                        RoleAuthorisation.role_id == role.id)
    )
    for name, (view, manage) in parsed.items():
        context.session.add(RoleAuthorisation(organisation_id=context.org_id, role_id=role.id,
                                              name=name, view=view, manage=manage))
    return role


BINDABLES = [
    mutation,
    billing_type,
    cost_type,
    role_type,
    _bind_attributes("SvcOrganisation", rules.ORGANISATIONS),
    _bind_attributes("SvcTag", rules.TAGS),
    _bind_attributes("SvcProject", rules.PROJECTS),
    _bind_attributes("SvcPerson", rules.PERSONS),
]
