"""Absence types and getAbsenceConsumed through POST /graphql."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from plumbing.db import unit_of_work
from service.models import AuditTrail
from tests.support import DAY_MS, HOUR_MS, Member, Org

MONDAY = 1_773_619_200_000  # 2026-03-16T00:00:00Z
UNKNOWN = "0123456789abcdef01234567"
FIELDS = "id name archived color unit involveCosts"
LIST = """query($filter: [SvcAbsenceFilter], $archived: Boolean) {
  getAbsenceTypes(filter: $filter, archived: $archived) { name }
  countAbsenceTypes(filter: $filter, archived: $archived)
}"""
CONSUMED = """query($p: SvcId!, $a: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
  getAbsenceConsumed(personId: $p, absenceId: $a, startTime: $s, endTime: $e)
}"""


async def add_type(org: Org, name: str, color: str | None = None) -> dict[str, Any]:
    data = await org.admin.gql(
        f"mutation($n: SvcName!, $c: SvcColor) {{ addAbsenceType(name: $n, color: $c) "
        f"{{ {FIELDS} }} }}",
        {"n": name, "c": color},
    )
    return data["addAbsenceType"]  # type: ignore[no-any-return]


async def names(who: Member, **variables: Any) -> list[str]:
    data = await who.gql(LIST, variables)
    found = [item["name"] for item in data["getAbsenceTypes"]]
    assert data["countAbsenceTypes"] == len(found)
    return found


async def edit(who: Member, field: str, argument: str, kind: str, id: str, value: Any) -> Any:
    data = await who.gql(
        f"mutation($id: SvcId!, $v: {kind}) {{ {field}(id: $id, {argument}: $v) {{ {FIELDS} }} }}",
        {"id": id, "v": value},
    )
    return data[field]


async def test_absence_type_lifecycle(org: Org) -> None:
    vacation = await add_type(org, "Vacation", "#00ff00")
    assert vacation == {"id": vacation["id"], "name": "Vacation", "archived": False,
                        "color": "#00ff00", "unit": "day", "involveCosts": False}
    sick = await add_type(org, "Sick leave")
    vid, sid = vacation["id"], sick["id"]
    admin = org.admin

    assert (await edit(admin, "editAbsenceTypeName", "name", "SvcName!", vid, "Holiday"))[
        "name"] == "Holiday"
    assert (await edit(admin, "editAbsenceTypeUnit", "unit", "SvcAbsenceUnit!", vid, "hour"))[
        "unit"] == "hour"
    assert (await edit(admin, "editAbsenceTypeInvolveCosts", "involveCosts", "Boolean!", vid,
                       True))["involveCosts"] is True
    assert (await edit(admin, "editAbsenceTypeColor", "color", "SvcColor", vid, None))[
        "color"] is None
    copy = await admin.gql(
        f'mutation {{ duplicateAbsenceType(id: "{vid}", name: "Holiday 2") {{ {FIELDS} }} }}')
    assert copy["duplicateAbsenceType"]["unit"] == "hour"
    assert copy["duplicateAbsenceType"]["involveCosts"] is True

    archived = await admin.gql(f'mutation {{ archiveAbsenceType(id: "{sid}") {{ archived }} }}')
    assert archived["archiveAbsenceType"]["archived"] is True
    assert await names(admin) == ["Holiday", "Holiday 2"]
    assert await names(admin, archived=True) == ["Holiday", "Holiday 2", "Sick leave"]
    assert await names(admin, archived=True, filter=[{"archived": True}]) == ["Sick leave"]
    await admin.gql(f'mutation {{ unarchiveAbsenceType(id: "{sid}") {{ id }} }}')
    many = await admin.gql(
        f'mutation {{ archiveAbsenceTypes(ids: ["{vid}", "{sid}"]) {{ archived }} }}')
    assert [t["archived"] for t in many["archiveAbsenceTypes"]] == [True, True]
    await admin.gql(f'mutation {{ unarchiveAbsenceTypes(ids: ["{vid}", "{sid}"]) {{ id }} }}')

    assert await names(admin, filter=[{"name": "HOLI"}]) == ["Holiday", "Holiday 2"]
    assert await names(admin, filter=[{"name": "%"}]) == []
    assert await names(admin, filter=[{"id": sid, "following": "OR"}, {"notId": vid}]) == [
        "Holiday 2", "Sick leave"]
    fetched = await admin.gql(f'{{ getAbsenceType(id: "{sid}") {{ {FIELDS} }} }}')
    assert fetched["getAbsenceType"]["name"] == "Sick leave"


async def test_everyone_reads_only_admins_edit(org: Org) -> None:
    vacation = await add_type(org, "Vacation")
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    assert await names(bob) == ["Vacation"]
    assert (await bob.gql(f'{{ getAbsenceType(id: "{vacation["id"]}") {{ name }} }}'))[
        "getAbsenceType"]["name"] == "Vacation"
    for who in (bob, mia):
        assert await who.gql.denied('mutation { addAbsenceType(name: "X") { id } }') == [
            "Mutation.addAbsenceType"]
        denied = await who.gql.denied(
            f'mutation {{ editAbsenceTypeName(id: "{vacation["id"]}", name: "X") {{ id }} }}')
        assert denied == ["Mutation.editAbsenceTypeName"]
        denied = await who.gql.denied(
            f'mutation {{ deleteAbsenceType(id: "{vacation["id"]}") {{ id }} }}')
        assert denied == ["Mutation.deleteAbsenceType"]
        denied = await who.gql.denied(
            f'mutation {{ archiveAbsenceTypes(ids: ["{vacation["id"]}"]) {{ id }} }}')
        assert denied == ["Mutation.archiveAbsenceTypes"]
    assert await names(org.admin) == ["Vacation"]


async def test_bad_input(org: Org) -> None:
    vacation = await add_type(org, "Vacation")
    gql = org.admin.gql
    message = await gql.error(f'{{ getAbsenceType(id: "{UNKNOWN}") {{ id }} }}')
    assert 'Invalid argument "id"' in message
    message = await gql.error(
        f'mutation {{ archiveAbsenceTypes(ids: ["{vacation["id"]}", "{UNKNOWN}"]) {{ id }} }}')
    assert 'Invalid argument "ids[1]"' in message
    assert await names(org.admin) == ["Vacation"]  # nothing archived
    message = await gql.error(
        f'mutation {{ editAbsenceTypeUnit(id: "{vacation["id"]}", unit: "week") {{ id }} }}')
    assert "day or hour" in message
    message = await gql.error('mutation { addAbsenceType(name: "  ") { id } }')
    assert "SvcName" in message
    message = await gql.error(LIST, {"filter": [{"following": "OR"}]})
    assert 'Invalid argument "filter[0]"' in message


async def _add_record(who: Member, person: Member, start: int, duration: int,
                      absence: str | None) -> str:
    data = await who.gql(
        "mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!, $a: SvcId) {"
        " addTimeRecord(startTime: $s, duration: $d, personId: $p, absenceId: $a) { id } }",
        {"s": start, "d": duration, "p": person.id, "a": absence},
    )
    return str(data["addTimeRecord"]["id"])


async def test_delete_checks_references(org: Org) -> None:
    used = await add_type(org, "Used")
    unused = await add_type(org, "Unused")
    bob = await org.add_member("Bob")
    await _add_record(bob, bob, MONDAY, HOUR_MS, used["id"])
    delete = "mutation($id: SvcId!, $check: Boolean) { deleteAbsenceType(id: $id, check: $check)" \
             " { id name } }"
    message = await org.admin.gql.error(delete, {"id": used["id"], "check": True})
    assert "used by 1 time record" in message
    assert "used by 1 time record" in await org.admin.gql.error(delete, {"id": used["id"]})

    checked = await org.admin.gql(delete, {"id": unused["id"], "check": True})
    assert checked["deleteAbsenceType"]["name"] == "Unused"
    assert await names(org.admin) == ["Unused", "Used"]
    await org.admin.gql(delete, {"id": unused["id"]})
    assert await names(org.admin) == ["Used"]
    async with unit_of_work(org.live.service.sessions) as session:
        operations = list(await session.scalars(
            select(AuditTrail.arguments).where(
                AuditTrail.organisation_id == org.id,
                AuditTrail.operation_name == "deleteAbsenceType",
            )
        ))
    assert [arguments["id"] for arguments in operations] == [unused["id"]]  # check: no trail


async def test_absence_consumed_in_days_and_hours(org: Org) -> None:
    vacation = await add_type(org, "Vacation")
    training = await add_type(org, "Training")
    await edit(org.admin, "editAbsenceTypeUnit", "unit", "SvcAbsenceUnit!", training["id"],
               "hour")
    bob = await org.add_member("Bob")
    carol = await org.add_member("Carol")
    vid, tid = vacation["id"], training["id"]
    await _add_record(bob, bob, MONDAY, 8 * HOUR_MS, vid)  # a full day
    await _add_record(bob, bob, MONDAY + DAY_MS, 4 * HOUR_MS, vid)  # half a day
    await _add_record(bob, bob, MONDAY + 2 * DAY_MS, 6 * HOUR_MS, vid)  # two records in one
    await _add_record(bob, bob, MONDAY + 2 * DAY_MS + 6 * HOUR_MS, 6 * HOUR_MS, vid)  # day: 1
    await _add_record(bob, bob, MONDAY + 3 * DAY_MS, 90 * 60_000, tid)
    await _add_record(bob, bob, MONDAY + 3 * DAY_MS, 8 * HOUR_MS, None)  # worked time
    await _add_record(bob, bob, MONDAY + 10 * DAY_MS, 8 * HOUR_MS, vid)  # outside the window

    window = {"p": bob.id, "s": MONDAY, "e": MONDAY + 7 * DAY_MS}
    assert (await bob.gql(CONSUMED, {**window, "a": vid}))["getAbsenceConsumed"] == 2.5
    assert (await bob.gql(CONSUMED, {**window, "a": tid}))["getAbsenceConsumed"] == 1.5
    one_day = {**window, "a": vid, "e": MONDAY + DAY_MS}
    assert (await org.admin.gql(CONSUMED, one_day))["getAbsenceConsumed"] == 1.0
    assert (await carol.gql(CONSUMED, {**window, "p": carol.id, "a": vid}))[
        "getAbsenceConsumed"] == 0.0

    assert await carol.gql.denied(CONSUMED, {**window, "a": vid}) == ["Query.getAbsenceConsumed"]
    message = await bob.gql.error(CONSUMED, {**window, "a": UNKNOWN})
    assert 'Invalid argument "absenceId"' in message
    message = await bob.gql.error(CONSUMED, {**window, "p": UNKNOWN, "a": vid})
    assert 'Invalid argument "personId"' in message
    message = await bob.gql.error(CONSUMED, {**window, "a": vid, "e": MONDAY - 1})
    assert 'Invalid argument "endTime"' in message
