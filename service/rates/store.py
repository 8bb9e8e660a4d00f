"""Billing and cost rates in the database: the Billing rates permission, input checks, loading
an organisation's rates as a `RateBook` for the pure rules (service/rates/rules.py), and the
day an instant falls on in the organisation's time zone."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.access import BILLING_RATES, MANAGE, VIEW, has
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.models import Organisation, Person, PersonTag, Project, ProjectTag, Tag
from service.rates import rules
from service.rates.models import Rate
from service.value_words import choice_problem, described


@dataclass(frozen=True)
class Level:
    """A level that holds rates: its collection in the rate rules, the argument naming the
    item (None: the organisation of the key), its model and rate column, and its name."""

    collection: str
    argument: str | None
    model: Any
    column: str | None
    what: str


LEVELS = {
    "Organisation": Level(rules.ORGANISATIONS, None, None, None, "organisation"),
    "Tag": Level(rules.TAGS, "tagId", Tag, "tag_id", "tag"),
    "Person": Level(rules.PERSONS, "personId", Person, "person_id", "person"),
    "Project": Level(rules.PROJECTS, "projectId", Project, "project_id", "project"),
}

_CURRENCY = re.compile(r"^[A-Z]{3}$")


async def _rates_rights(context: RequestContext) -> tuple[bool, bool]:
    """(may view, may edit) rates, from the caller's role (read with the key)."""
    # The Billing rates permission: view lets the role see rates and amounts, manage edit them
    # too; administrators always.
    return (has(context, BILLING_RATES, VIEW),
            has(context, BILLING_RATES, MANAGE))


async def may_view_rates(context: RequestContext) -> bool:
    return (await _rates_rights(context))[0]


async def require_view_rates(context: RequestContext) -> None:
    if not (await _rates_rights(context))[0]:
        raise PermissionDenied("viewing rates needs the Billing rates permission")


async def require_manage_rates(context: RequestContext) -> None:
    if not (await _rates_rights(context))[1]:
        raise PermissionDenied("editing rates needs the Billing rates permission")


def check_amount(amount: Mapping[str, Any], argument: str = "amount") -> tuple[int, str]:
    """(value, currency) of a SvcInputAmount: a non-negative integer in the currency's
    smallest unit and a three-letter code."""
    value = amount.get("value")
    currency = str(amount.get("currency") or "").strip().upper()
    if not isinstance(value, int) or value < 0:
        raise BadInput(f"{argument}.value", "must be a whole non-negative number of the "
                       "currency's smallest unit (cents)")
    if value > 10**15:
        raise BadInput(f"{argument}.value", "is too large")
    if not _CURRENCY.match(currency):
        raise BadInput(f"{argument}.currency", f"must be a three-letter code, got {currency!r}")
    return value, currency


def check_method(method: Any, argument: str = "method") -> str:
    if method not in rules.METHODS:
        raise BadInput(argument, choice_problem(rules.METHODS, method))
    return str(method)


def check_split_type(split_type: Any, collection: str, method: str) -> str | None:
    if split_type is None:
        return None
    allowed = rules.SPLITS_BY_LEVEL[collection]
    if split_type not in allowed:
        raise BadInput("splitType", f"a rate of the {collection} level splits by "
                       f"{' or '.join(allowed)}, not {described(split_type)}")
    if method not in rules.SPLITTABLE_METHODS:
        raise BadInput("splitType", "only hourly and daily rates can be split")
    return str(split_type)


def check_start(start_ms: Any, argument: str = "startTime") -> int:
    if not isinstance(start_ms, int) or not 0 <= start_ms < 253402300800000:
        raise BadInput(argument, "must be a date (milliseconds since 1970, before year 10000)")
    return start_ms


def organisation_zone(organisation: Organisation) -> ZoneInfo:
    try:
        return ZoneInfo(organisation.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def day_of(ms: int, zone: ZoneInfo) -> date:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).astimezone(zone).date()


def collection_of(rate: Rate) -> str:
    return {
        "project": rules.PROJECTS, "person": rules.PERSONS, "tag": rules.TAGS,
    }.get(rate.level, rules.ORGANISATIONS)


def facts(rate: Rate, zone: ZoneInfo) -> rules.RateFacts:
    return rules.RateFacts(
        id=rate.id,
        start_day=day_of(rate.start_ms, zone),
        method=rate.method,
        value=rate.value,
        currency=rate.currency,
        split_type=rate.split_type,
        splits={
            s.entity_id: rules.SplitRow(s.value, s.currency, s.non_billable) for s in rate.splits
        },
        repeat_enabled=rate.repeat_enabled,
        repeat_occurrence=rate.repeat_occurrence,
        repeat_frequency=rate.repeat_frequency,
        repeat_end_day=None if rate.repeat_end_ms is None else day_of(rate.repeat_end_ms, zone),
    )


async def org_rates(session: AsyncSession, org_id: str, rate_type: str) -> list[Rate]:
    """Every rate of one type in the organisation, oldest From date first (then made first)."""
    rows = await session.scalars(
        select(Rate)
        .where(Rate.organisation_id == org_id, Rate.type == rate_type)
        .order_by(Rate.start_ms, Rate.id)
    )
    return list(rows)


async def load_book(
    session: AsyncSession, organisation: Organisation, rate_type: str
) -> tuple[rules.RateBook, dict[str, Rate]]:
    """The organisation's rates of one type and the structure the resolution walks, and the
    rate rows by id."""
    org_id = organisation.id
    zone = organisation_zone(organisation)
    rates = await org_rates(session, org_id, rate_type)
    by_place: dict[rules.Place, list[rules.RateFacts]] = {}
    for rate in rates:
        place = rules.Place(collection_of(rate), rate.entity_id)
        by_place.setdefault(place, []).append(facts(rate, zone))
    project_parents = {
        row[0]: row[1]
        for row in await session.execute(
            select(Project.id, Project.parent_id).where(Project.organisation_id == org_id)
        )
    }
    tags = {
        row[0]: (row[1], row[2], row[3])
        for row in await session.execute(
            select(Tag.id, Tag.parent_id, Tag.level, Tag.name).where(Tag.organisation_id == org_id)
        )
    }
    order = sorted(tags, key=lambda t: (-tags[t][1], tags[t][2], t))
    rank = {tag_id: index for index, tag_id in enumerate(order)}
    since: dict[tuple[str, str], date] = {}
    project_tags: dict[str, list[str]] = {}
    for project_id, tag_id, start_ms in await session.execute(
        select(ProjectTag.project_id, ProjectTag.tag_id, ProjectTag.start_ms)
        .where(ProjectTag.organisation_id == org_id)
    ):
        project_tags.setdefault(project_id, []).append(tag_id)
        if start_ms is not None:
            since[(project_id, tag_id)] = day_of(start_ms, zone)
    person_tags: dict[str, list[str]] = {}
    for person_id, tag_id, start_ms in await session.execute(
        select(PersonTag.person_id, PersonTag.tag_id, PersonTag.start_ms)
        .where(PersonTag.organisation_id == org_id)
    ):
        person_tags.setdefault(person_id, []).append(tag_id)
        if start_ms is not None:
            since[(person_id, tag_id)] = day_of(start_ms, zone)
    for listing in (*project_tags.values(), *person_tags.values()):
        listing.sort(key=lambda t: rank.get(t, len(rank)))
    book = rules.RateBook(
        organisation_id=org_id,
        rates=by_place,
        project_parents=project_parents,
        tag_parents={tag_id: values[0] for tag_id, values in tags.items()},
        project_tags=project_tags,
        person_tags=person_tags,
        tag_since=since,
    )
    return book, {rate.id: rate for rate in rates}
