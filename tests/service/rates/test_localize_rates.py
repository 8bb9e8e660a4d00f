"""localize{Organisation,Tag,Person,Project}{Billing,Cost} over POST /graphql: inherited rates
copied to the entity (its attribute then names it), its own returned as they are, the Billing
rates permission, and rates the entity cannot inherit refused by name."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from plumbing.db import unit_of_work
from service.models import AuditTrail
from tests.service.rates.test_billing_rates import RATE, add_project, add_rate, add_tag, eur
from tests.support import Org

LEVELS = ("Organisation", "Tag", "Person", "Project")
KINDS = ("Billing", "Cost")
ARGUMENTS = {"Tag": "tagId", "Person": "personId", "Project": "projectId"}
GETTERS = {"Tag": "getTag", "Person": "getPerson", "Project": "getProject"}
UNKNOWN = "0123456789abcdef01234567"


async def audited(org: Org, operation: str) -> int:
    async with unit_of_work(org.live.service.sessions) as session:
        return int(await session.scalar(select(func.count()).select_from(AuditTrail).where(
            AuditTrail.organisation_id == org.id, AuditTrail.operation_name == operation)) or 0)


async def entity_of(org: Org, level: str) -> str:
    if level == "Tag":
        return await add_tag(org, "Clients")
    if level == "Project":
        return await add_project(org, "Apollo")
    if level == "Person":
        return (await org.add_member("Bob")).id
    return org.id


def localize(level: str, kind: str) -> str:
    operation = f"localize{level}{kind}"
    if level == "Organisation":
        return (f"mutation($r: [SvcId!]!) {{ {operation}(rateIds: $r) "
                f"{{ {RATE} }} }}")
    argument = ARGUMENTS[level]
    return (f"mutation($e: SvcId!, $r: [SvcId!]!) {{ {operation}({argument}: $e, rateIds: $r) "
            f"{{ {RATE} }} }}")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", LEVELS)
async def test_localize(org: Org, level: str, kind: str) -> None:
    inherited = await add_rate(org.admin, "Organisation", kind, a=eur(4200))
    entity = await entity_of(org, level)
    operation = f"localize{level}{kind}"
    variables = {"r": [inherited["id"]]} | ({} if level == "Organisation" else {"e": entity})
    employee = await org.add_member("Eve")
    assert await employee.gql.denied(localize(level, kind), variables) == [
        f"Mutation.{operation}"]
    made = (await org.admin.gql(localize(level, kind), variables))[operation]
    assert len(made) == 1 and made[0]["amount"] == eur(4200)
    assert made[0]["startTime"] == inherited["startTime"]
    attribute = "billings" if kind == "Billing" else "costs"
    if level == "Organisation":
        assert made[0]["id"] == inherited["id"]  # its own: nothing to copy
        read = (await org.admin.gql(f"{{ currentOrganisation {{ {attribute} {{ value {{ id }} "
                                    f"}} }} }}"))["currentOrganisation"]
        assert read[attribute]["value"] == [{"id": inherited["id"]}]
    else:
        assert made[0]["id"] != inherited["id"]
        assert made[0]["entity"] == {"id": entity, "type": level.lower()}
        getter = GETTERS[level]
        read = (await org.admin.gql(
            f'{{ {getter}(id: "{entity}") {{ {attribute} {{ value {{ id }} '
            f'path {{ id collection }} }} }} }}'))[getter][attribute]
        assert read["value"] == [{"id": made[0]["id"]}]
        assert read["path"] == [{"id": entity, "collection": f"{level.lower()}s"}]
        # Localizing the copy again: it is the entity's own now.
        again = (await org.admin.gql(localize(level, kind),
                                     {"e": entity, "r": [made[0]["id"]]}))[operation]
        assert [r["id"] for r in again] == [made[0]["id"]]
    assert await audited(org, operation) == (1 if level == "Organisation" else 2)


async def test_rates_not_inherited_are_refused(org: Org) -> None:
    bob = await org.add_member("Bob")
    ann = await org.add_member("Ann")
    bobs = await add_rate(org.admin, "Person", entity=("personId", bob.id))
    query = localize("Person", "Billing")

    async def error(rate_ids: list[str], person: str = ann.id) -> str:
        return await org.admin.gql.error(query, {"e": person, "r": rate_ids})

    message = await error([bobs["id"]])
    assert 'Invalid argument "rateIds"' in message and "not one this person inherits" in message
    assert 'Invalid argument "rateIds"' in await error([UNKNOWN])
    assert 'Invalid argument "rateIds"' in await error([])
    assert 'Invalid argument "personId"' in await error([bobs["id"]], UNKNOWN)
    # A cost rate is not a billing rate.
    cost = await add_rate(org.admin, "Organisation", "Cost")
    assert 'Invalid argument "rateIds"' in await error([cost["id"]])
    # Split by persons: a person's rate splits by projects or tags only.
    split = await add_rate(org.admin, "Organisation", t="persons")
    message = await error([split["id"]])
    assert "split by persons" in message and "projects or tags" in message
    # A subproject inherits its parent's rates.
    top = await add_project(org, "Top")
    sub = await add_project(org, "Sub", top)
    parents = await add_rate(org.admin, "Project", entity=("projectId", top))
    made = (await org.admin.gql(localize("Project", "Billing"),
                                {"e": sub, "r": [parents["id"]]}))["localizeProjectBilling"]
    assert made[0]["entity"] == {"id": sub, "type": "project"}
    assert await audited(org, "localizePersonBilling") == 0
