"""Billing and cost rate mutations: add / delete / duplicate at the organisation, tag, person
and project levels, the edits of one rate, and its split rows. The 2 x (4 x 3 + 10 + 4)
near-identical operations are bound by `bind_level_operations`, `bind_rate_edits` and
`bind_split_operations` from one table each. Editing rates needs the Billing rates permission
(service/rates/store.py); every input is checked before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ariadne import MutationType

from service.errors import BadInput, NotFound
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, Project, Tag
from service.rates import rules
from service.rates.models import RATE_BILLING, RATE_COST, Rate, RateSplit
from service.rates.store import (
    LEVELS,
    Level,
    check_amount,
    check_method,
    check_split_type,
    check_start,
    collection_of,
    require_manage_rates,
)

mutation = MutationType()


TYPES = {"Billing": (RATE_BILLING, "billingId"), "Cost": (RATE_COST, "costId")}
SPLIT_MODELS: dict[str, tuple[Any, str]] = {
    rules.SPLIT_PERSONS: (Person, "person"),
    rules.SPLIT_PROJECTS: (Project, "project"),
    rules.SPLIT_TAGS: (Tag, "tag"),
}
REPEAT_OCCURRENCES = ("day", "week", "month", "year")
MONTH_PATTERNS = ("firstDay", "lastDay", "weekday", "date")


async def load_rate(
    context: RequestContext, rate_type: str, rate_id: str, argument: str
) -> Rate:
    what = f"{rate_type} rate"
    rate = await get_in_org(context.session, Rate, context.org_id, rate_id, argument, what,
                            for_update=True)
    if rate.type != rate_type:
        raise NotFound(argument, rate_id, what)
    return rate


# -- add / delete / duplicate at a level ---------------------------------------------------


async def _entity_id(context: RequestContext, level: Level, args: dict[str, Any]) -> str:
    if level.argument is None:
        return context.org_id
    entity = await get_in_org(context.session, level.model, context.org_id,
                              args.get(level.argument), level.argument, level.what)
    return str(entity.id)


async def _rate_at(
    context: RequestContext, rate_type: str, level: Level, args: dict[str, Any], argument: str
) -> Rate:
    entity_id = await _entity_id(context, level, args)
    rate = await load_rate(context, rate_type, args[argument], argument)
    if collection_of(rate) != level.collection or rate.entity_id != entity_id:
        raise NotFound(argument, args[argument], f"{rate_type} rate of this {level.what}")
    return rate


def bind_level_operations(mutation: MutationType, name: str, level: Level, type_name: str) -> None:
    """add{Level}{Type}, delete{Level}{Type}, duplicate{Level}{Type}."""
    rate_type, id_argument = TYPES[type_name]

    async def add(_root: Any, info: Any, **args: Any) -> Rate:
        context: RequestContext = info.context
        await require_manage_rates(context)
        entity_id = await _entity_id(context, level, args)
        start_ms = check_start(args.get("startTime"))
        value, currency = check_amount(args.get("amount") or {})
        method = check_method(args.get("method"))
        split_type = check_split_type(args.get("splitType"), level.collection, method)
        repeat = bool(args.get("repeatEnabled"))
        if repeat and method != rules.METHOD_FIXED:
            raise BadInput("repeatEnabled", "only a fixed fee repeats")
        rate = Rate(
            organisation_id=context.org_id, type=rate_type, start_ms=start_ms, method=method,
            value=value, currency=currency, split_type=split_type, repeat_enabled=repeat,
            repeat_occurrence="month", repeat_frequency=1, created_ms=context.now_ms,
            splits=[],
        )
        if level.column is not None:
            setattr(rate, level.column, entity_id)
        context.session.add(rate)
        return rate

    async def delete(_root: Any, info: Any, **args: Any) -> Rate:
        context: RequestContext = info.context
        await require_manage_rates(context)
        rate = await _rate_at(context, rate_type, level, args, id_argument)
        await context.session.delete(rate)
        return rate

    async def duplicate(_root: Any, info: Any, **args: Any) -> Rate:
        context: RequestContext = info.context
        await require_manage_rates(context)
        rate = await _rate_at(context, rate_type, level, args, id_argument)
        copy = Rate(
            organisation_id=context.org_id, type=rate.type, tag_id=rate.tag_id,
            project_id=rate.project_id, person_id=rate.person_id, start_ms=rate.start_ms,
            method=rate.method, value=rate.value, currency=rate.currency,
            split_type=rate.split_type, repeat_enabled=rate.repeat_enabled,
            repeat_occurrence=rate.repeat_occurrence, repeat_frequency=rate.repeat_frequency,
            repeat_week_pattern=rate.repeat_week_pattern,
            repeat_month_pattern=rate.repeat_month_pattern, repeat_end_ms=rate.repeat_end_ms,
            created_ms=context.now_ms,
            splits=[
                RateSplit(organisation_id=context.org_id, entity_id=s.entity_id, value=s.value,
                          currency=s.currency, non_billable=s.non_billable, position=s.position)
                for s in rate.splits
            ],
        )
        context.session.add(copy)
        return copy

    mutation.set_field(f"add{name}{type_name}", add)
    mutation.set_field(f"delete{name}{type_name}", delete)
    mutation.set_field(f"duplicate{name}{type_name}", duplicate)


# -- edits of one rate -----------------------------------------------------------------------


def _set_start(rate: Rate, value: Any) -> None:
    start = check_start(value)
    if rate.repeat_end_ms is not None and start > rate.repeat_end_ms:
        raise BadInput("startTime", "is after the repeat's end date")
    rate.start_ms = start


def _set_method(rate: Rate, value: Any) -> None:
    method = check_method(value)
    if rate.split_type is not None and method not in rules.SPLITTABLE_METHODS:
        raise BadInput("method", "only hourly and daily rates can be split: remove the split "
                       "first (splitType null)")
    if rate.repeat_enabled and method != rules.METHOD_FIXED:
        raise BadInput("method", "only a fixed fee repeats: turn the repeat off first")
    rate.method = method


def _set_amount(rate: Rate, value: Any) -> None:
    rate.value, rate.currency = check_amount(value or {})


def _set_split_type(rate: Rate, value: Any) -> None:
    split_type = check_split_type(value, collection_of(rate), rate.method)
    if split_type != rate.split_type:
        rate.splits.clear()  # the rows name entities of the previous kind
    rate.split_type = split_type


def _set_repeat_enabled(rate: Rate, value: Any) -> None:
    if value and rate.method != rules.METHOD_FIXED:
        raise BadInput("enabled", "only a fixed fee repeats")
    rate.repeat_enabled = bool(value)


def _set_occurrence(rate: Rate, value: Any) -> None:
    if value not in REPEAT_OCCURRENCES:
        raise BadInput("occurrence", f"must be one of {', '.join(REPEAT_OCCURRENCES)}")
    rate.repeat_occurrence = str(value)


def _set_frequency(rate: Rate, value: Any) -> None:
    if not isinstance(value, int) or not 1 <= value <= 1000:
        raise BadInput("frequency", "must be a whole number from 1 to 1000")
    rate.repeat_frequency = value


def _set_week_pattern(rate: Rate, value: Any) -> None:
    if value is not None and (
        not isinstance(value, list)
        or not all(isinstance(d, int) and 0 <= d <= 6 for d in value)
        or len(set(value)) != len(value)
    ):
        raise BadInput("weekPattern", "must be a list of distinct weekdays 0 (Monday) to 6")
    rate.repeat_week_pattern = sorted(value) if value is not None else None


def _set_month_pattern(rate: Rate, value: Any) -> None:
    if value is not None and value not in MONTH_PATTERNS:
        raise BadInput("monthPattern", f"must be one of {', '.join(MONTH_PATTERNS)} or null")
    rate.repeat_month_pattern = value


def _set_end(rate: Rate, value: Any) -> None:
    if value is not None:
        check_start(value, "endTime")
        if value < rate.start_ms:
            raise BadInput("endTime", "is before the rate's From date")
    rate.repeat_end_ms = value


EDITS: dict[str, tuple[str, Callable[[Rate, Any], None]]] = {
    "StartTime": ("startTime", _set_start),
    "Method": ("method", _set_method),
    "Amount": ("amount", _set_amount),
    "SplitType": ("splitType", _set_split_type),
    "RepeatEnabled": ("enabled", _set_repeat_enabled),
    "RepeatOccurrence": ("occurrence", _set_occurrence),
    "RepeatFrequency": ("frequency", _set_frequency),
    "RepeatWeekPattern": ("weekPattern", _set_week_pattern),
    "RepeatMonthPattern": ("monthPattern", _set_month_pattern),
    "RepeatEndTime": ("endTime", _set_end),
}


def bind_rate_edits(mutation: MutationType, type_name: str) -> None:
    """edit{Type}{Field}(id, <argument>) for every row of EDITS."""
    rate_type, _ = TYPES[type_name]
    for field_name, (argument, setter) in EDITS.items():

        def bind(argument: str, setter: Callable[[Rate, Any], None]) -> Any:
            async def edit(_root: Any, info: Any, id: str, **args: Any) -> Rate:
                context: RequestContext = info.context
                await require_manage_rates(context)
                rate = await load_rate(context, rate_type, id, "id")
                setter(rate, args.get(argument))
                return rate

            return edit

        mutation.set_field(f"edit{type_name}{field_name}", bind(argument, setter))


# -- split rows -----------------------------------------------------------------------------


def _row(rate: Rate, entity_id: str) -> RateSplit:
    for row in rate.splits:
        if row.entity_id == entity_id:
            return row
    raise NotFound("entityId", entity_id, "split row of this rate")


def bind_split_operations(mutation: MutationType, type_name: str) -> None:
    """add{Type}Split, remove{Type}Split, edit{Type}SplitAmount, edit{Type}SplitNonBillable."""
    rate_type, _ = TYPES[type_name]

    async def split_rate(context: RequestContext, rate_id: str) -> Rate:
        await require_manage_rates(context)
        return await load_rate(context, rate_type, rate_id, "rateId")

    async def add(_root: Any, info: Any, rateId: str, entityId: str, amount: dict[str, Any],
                  nonBillable: bool) -> Rate:
        context: RequestContext = info.context
        rate = await split_rate(context, rateId)
        if rate.split_type is None:
            raise BadInput("rateId", "the rate is not split: set its splitType first")
        model, what = SPLIT_MODELS[rate.split_type]
        await get_in_org(context.session, model, context.org_id, entityId, "entityId", what)
        if any(row.entity_id == entityId for row in rate.splits):
            raise BadInput("entityId", f"the rate already has a row for this {what}")
        value, currency = check_amount(amount)
        position = max((row.position for row in rate.splits), default=-1) + 1
        rate.splits.append(RateSplit(
            organisation_id=context.org_id, entity_id=entityId, value=value, currency=currency,
            non_billable=bool(nonBillable), position=position,
        ))
        return rate

    async def remove(_root: Any, info: Any, rateId: str, entityId: str) -> Rate:
        rate = await split_rate(info.context, rateId)
        rate.splits.remove(_row(rate, entityId))
        return rate

    async def edit_amount(_root: Any, info: Any, rateId: str, entityId: str,
                          amount: dict[str, Any]) -> Rate:
        rate = await split_rate(info.context, rateId)
        row = _row(rate, entityId)
        row.value, row.currency = check_amount(amount)
        return rate

    async def edit_non_billable(_root: Any, info: Any, rateId: str, entityId: str,
                                nonBillable: bool) -> Rate:
        rate = await split_rate(info.context, rateId)
        _row(rate, entityId).non_billable = bool(nonBillable)
        return rate

    mutation.set_field(f"add{type_name}Split", add)
    mutation.set_field(f"remove{type_name}Split", remove)
    mutation.set_field(f"edit{type_name}SplitAmount", edit_amount)
    mutation.set_field(f"edit{type_name}SplitNonBillable", edit_non_billable)


for _type_name in TYPES:
    for _level_name, _level in LEVELS.items():
        bind_level_operations(mutation, _level_name, _level, _type_name)
    bind_rate_edits(mutation, _type_name)
    bind_split_operations(mutation, _type_name)

BINDABLES = [mutation]
