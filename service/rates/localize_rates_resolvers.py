"""localize{Organisation,Tag,Person,Project}{Billing,Cost}(…, rateIds): the rates an entity
inherits (from its tags, its parent projects or the organisation: the places its `billings` /
`costs` attribute walks, service/rates/rules.py) copied to the entity, so that they can be
edited there without changing them for everyone else. A rate that already is the entity's own
is returned as it is (so the organisation, which inherits nothing, only "localizes" its own).
Each id must name a rate of that type the entity can inherit; a rate split in a way the
entity's level cannot be split is refused, naming the rate. Copies keep the From date, the
method, the amount, the repeat and the split rows. Needs the Billing rates permission.

The eight operations are derived from LEVELS x TYPES below.
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType

from service.errors import BadInput, NotFound
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.rates import rules
from service.rates.models import RATE_BILLING, RATE_COST, Rate, RateSplit
from service.rates.store import LEVELS, Level, load_book, require_manage_rates

MAX_RATES = 500

mutation = MutationType()


TYPES = {"Billing": (RATE_BILLING, "billing"), "Cost": (RATE_COST, "cost")}


def copy_to(rate: Rate, level: Level, entity_id: str, now_ms: int) -> Rate:
    copy = Rate(
        organisation_id=rate.organisation_id, type=rate.type, start_ms=rate.start_ms,
        method=rate.method, value=rate.value, currency=rate.currency,
        split_type=rate.split_type, repeat_enabled=rate.repeat_enabled,
        repeat_occurrence=rate.repeat_occurrence, repeat_frequency=rate.repeat_frequency,
        repeat_week_pattern=rate.repeat_week_pattern,
        repeat_month_pattern=rate.repeat_month_pattern, repeat_end_ms=rate.repeat_end_ms,
        created_ms=now_ms,
        splits=[
            RateSplit(organisation_id=rate.organisation_id, entity_id=s.entity_id,
                      value=s.value, currency=s.currency, non_billable=s.non_billable,
                      position=s.position)
            for s in rate.splits
        ],
    )
    if level.column is not None:
        setattr(copy, level.column, entity_id)
    return copy


def check_ids(rate_ids: Any) -> list[str]:
    if not isinstance(rate_ids, list) or not rate_ids:
        raise BadInput("rateIds", "name at least one rate")
    if len(rate_ids) > MAX_RATES:
        raise BadInput("rateIds", f"at most {MAX_RATES} rates at once")
    return list(dict.fromkeys(str(i) for i in rate_ids))


def bind(level_name: str, level: Level, type_name: str) -> None:
    rate_type, word = TYPES[type_name]

    async def localize(_root: Any, info: Any, rateIds: list[str], **args: Any) -> list[Rate]:
        context: RequestContext = info.context
        await require_manage_rates(context)
        ids = check_ids(rateIds)
        entity_id = context.org_id
        if level.argument is not None:
            entity = await get_in_org(context.session, level.model, context.org_id,
                                      args.get(level.argument), level.argument, level.what)
            entity_id = str(entity.id)
        book, rows = await load_book(context.session, context.organisation, rate_type)
        own = rules.Place(level.collection, entity_id)
        reachable = {facts.id: place for place in rules.inheritance_places(book, own)
                     for facts in book.rates.get(place, ())}
        allowed_splits = rules.SPLITS_BY_LEVEL[level.collection]
        result: list[Rate] = []
        for rate_id in ids:
            rate = rows.get(rate_id)
            if rate is None:
                raise NotFound("rateIds", rate_id, f"{word} rate")
            place = reachable.get(rate_id)
            if place is None:
                raise BadInput("rateIds", f"the {word} rate {rate_id} is not one this "
                               f"{level.what} inherits (from its tags, parent projects or "
                               f"the organisation)")
            if place == own:
                result.append(rate)
                continue
            if rate.split_type is not None and rate.split_type not in allowed_splits:
                raise BadInput("rateIds", f"the {word} rate {rate_id} is split by "
                               f"{rate.split_type}; a {level.what}'s rate splits by "
                               f"{' or '.join(allowed_splits)} only")
            copy = copy_to(rate, level, entity_id, context.now_ms)
            context.session.add(copy)
            result.append(copy)
        await context.session.flush()
        return result

    mutation.set_field(f"localize{level_name}{type_name}", localize)


for _level_name, _level in LEVELS.items():
    for _type_name in TYPES:
        bind(_level_name, _level, _type_name)

BINDABLES = [mutation]
