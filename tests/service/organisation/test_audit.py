"""getAuditTrails through POST /graphql: window, filters, visibility."""

from __future__ import annotations

from typing import Any

from plumbing.db import unit_of_work
from service.models import Person
from tests.support import DAY_MS, Org

TRAIL = "operationName arguments { name value } timestamp person { id name } responseId"
QUERY = (
    "query($s: SvcTimestamp, $p: SvcId, $o: [String], $a: SvcArgumentMatch, "
    "$r: SvcResponseMatch) { getAuditTrails(startTime: $s, fromPersonId: $p, operations: $o, "
    f"argumentMatch: $a, responseMatch: $r) {{ {TRAIL} }} }}"
)
T0 = 1_780_000_000_000


async def trails(gql: Any, **variables: Any) -> list[dict[str, Any]]:
    data = await gql(QUERY, variables)
    result: list[dict[str, Any]] = data["getAuditTrails"]
    return result


async def test_entries_and_their_fields(org: Org) -> None:
    org.live.clock.set(T0)
    bob = await org.add_member("Bob")
    await org.admin.gql('mutation { editOrganisationName(name: "Acme Ltd") { id } }')
    org.live.clock.advance(1000)
    data = await org.admin.gql(
        'mutation($id: SvcId!) { editPersonName(id: $id, name: "Robert") { id } '
        "  editPersonStartDate(id: $id, startDate: 1767225600000) { id } }",
        {"id": bob.id},
    )
    assert data["editPersonName"]["id"] == bob.id
    # A query is not audited; a refused or failed mutation leaves no entry.
    await org.admin.gql("{ getPersons { id } }")
    await bob.gql.denied('mutation { editOrganisationName(name: "X") { id } }')
    await org.admin.gql.error(
        'mutation { editPersonName(id: "aaaaaaaaaaaaaaaaaaaaaaaa", name: "X") { id } }'
    )

    entries = await trails(org.admin.gql)
    assert [e["operationName"] for e in entries] == [
        "editPersonStartDate",
        "editPersonName",
        "editOrganisationName",
    ]
    newest = entries[0]
    assert newest["timestamp"] == T0 + 1000
    assert newest["person"] == {"id": org.admin.id, "name": "Ada Admin"}
    assert newest["responseId"] == bob.id
    assert newest["arguments"] == [
        {"name": "id", "value": bob.id},
        {"name": "startDate", "value": "1767225600000"},
    ]
    assert entries[1]["arguments"] == [
        {"name": "id", "value": bob.id},
        {"name": "name", "value": "Robert"},
    ]
    assert entries[2]["responseId"] == org.id
    assert entries[2]["timestamp"] == T0


async def test_seven_day_windows(org: Org) -> None:
    org.live.clock.set(T0)
    await org.admin.gql('mutation { editOrganisationName(name: "Week one") { id } }')
    org.live.clock.set(T0 + 6 * DAY_MS)
    await org.admin.gql('mutation { editOrganisationName(name: "Day six") { id } }')
    org.live.clock.set(T0 + 10 * DAY_MS)
    await org.admin.gql('mutation { editOrganisationName(name: "Day ten") { id } }')

    def values(entries: list[dict[str, Any]]) -> list[str]:
        return [e["arguments"][0]["value"] for e in entries]

    # Without startTime: the last seven days.
    assert values(await trails(org.admin.gql)) == ["Day ten", "Day six"]
    # With startTime: the seven days starting there.
    assert values(await trails(org.admin.gql, s=T0)) == ["Day six", "Week one"]
    assert values(await trails(org.admin.gql, s=T0 + 7 * DAY_MS)) == ["Day ten"]
    assert values(await trails(org.admin.gql, s=T0 - 7 * DAY_MS)) == []
    message = await org.admin.gql.error(QUERY, {"s": -1})
    assert '"startTime"' in message


async def test_filters(org: Org) -> None:
    bob = await org.add_member("Bob")
    cleo = await org.add_member("Cleo", role="admin")
    taxi = (await org.admin.gql('mutation { addExpenseType(name: "Taxi") { id } }'))[
        "addExpenseType"
    ]["id"]
    record = await bob.gql(
        "mutation($t: SvcId!, $p: SvcId) { addExpenseRecord(date: 0, expenseTypeId: $t, "
        "value: 5, personId: $p) { id } }",
        {"t": taxi, "p": bob.id},
    )
    record_id = record["addExpenseRecord"]["id"]
    await cleo.gql(
        "mutation($ids: [SvcId]!) { archivePersons(ids: $ids) { id } }", {"ids": [bob.id]}
    )
    await cleo.gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, personId: $p) "
        "{ id } }",
        {"m": cleo.id, "p": bob.id},
    )

    def names(entries: list[dict[str, Any]]) -> list[str]:
        return [e["operationName"] for e in entries]

    gql = org.admin.gql
    assert names(await trails(gql, p=cleo.id)) == ["makeManagerOfPerson", "archivePersons"]
    assert names(await trails(gql, p=bob.id)) == ["addExpenseRecord"]
    assert names(await trails(gql, o=["addExpenseType", "archivePersons"])) == [
        "archivePersons",
        "addExpenseType",
    ]
    # argumentMatch: single arguments, list arguments (ids), and alternative names.
    assert names(await trails(gql, a={"personId": bob.id})) == [
        "makeManagerOfPerson",
        "addExpenseRecord",
    ]
    assert names(await trails(gql, a={"id": bob.id})) == ["archivePersons"]
    assert names(await trails(gql, a={"managerId": cleo.id})) == ["makeManagerOfPerson"]
    assert names(await trails(gql, a={"expenseTypeId": taxi})) == ["addExpenseRecord"]
    assert names(await trails(gql, a={"personId": bob.id, "managerId": cleo.id})) == [
        "makeManagerOfPerson"
    ]
    assert names(await trails(gql, a={"projectId": "0" * 24})) == []
    # responseMatch: the id the operation answered with.
    assert names(await trails(gql, r={"id": record_id})) == ["addExpenseRecord"]
    assert names(await trails(gql, r={"id": taxi})) == ["addExpenseType"]
    assert names(await trails(gql, r={"id": bob.id})) == ["archivePersons"]

    message = await gql.error(QUERY, {"o": ["addExpenseType", "getPersons"]})
    assert '"operations[1]"' in message
    message = await gql.error(QUERY, {"p": "not an id"})
    assert "SvcId" in message


async def test_non_admins_see_only_their_own_entries(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await org.admin.gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, personId: $p) "
        "{ id } }",
        {"m": mia.id, "p": bob.id},
    )
    await bob.gql(
        'mutation($id: SvcId!) { editPersonLang(id: $id, lang: "de") { id } }', {"id": bob.id}
    )
    await mia.gql(
        'mutation($id: SvcId!) { editPersonLang(id: $id, lang: "fr") { id } }', {"id": mia.id}
    )
    for member, value in ((bob, "de"), (mia, "fr")):
        entries = await trails(member.gql)
        assert [(e["operationName"], e["person"]["id"]) for e in entries] == [
            ("editPersonLang", member.id)
        ]
        assert entries[0]["arguments"][1] == {"name": "lang", "value": value}
        # Asking for someone else's entries gives nothing rather than an error.
        assert await trails(member.gql, p=org.admin.id) == []
    assert len(await trails(org.admin.gql)) == 3


async def test_entries_of_a_deleted_person_remain(org: Org) -> None:
    olga = await org.add_member("Olga", role="admin")
    await olga.gql('mutation { editOrganisationColor(color: "#abcdef") { id } }')
    async with unit_of_work(org.live.service.sessions) as session:
        person = await session.get(Person, olga.id)
        assert person is not None
        await session.delete(person)
    entries = await trails(org.admin.gql)
    assert [e["operationName"] for e in entries] == ["editOrganisationColor"]
    assert entries[0]["person"] == {"id": olga.id, "name": "Deleted person"}
    assert entries[0]["arguments"] == [{"name": "color", "value": "#abcdef"}]
