"""People, roles and people managers through POST /graphql."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from plumbing.db import unit_of_work
from service.models import (
    ExpenseType,
    Person,
    PersonManager,
    PersonTag,
    Tag,
    TimeRecord,
)
from service.organisation.provisioning import ensure_api_key
from tests.support import Org

PERSON = "id name email archived color lang startDate { ts iso } role { id name }"


async def role_ids(org: Org) -> dict[str, str]:
    data = await org.admin.gql("{ getRoles { id name archived } }")
    return {role["name"]: role["id"] for role in data["getRoles"]}


async def add_person(org: Org, name: str, email: str, role: str = "Employee") -> dict[str, Any]:
    roles = await role_ids(org)
    data = await org.admin.gql(
        f"mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) {{"
        f'  addPerson(name: $n, email: $e, roleId: $r, color: "#ff0000") {{ {PERSON} }} }}',
        {"n": name, "e": email, "r": roles[role]},
    )
    person: dict[str, Any] = data["addPerson"]
    return person


async def test_a_new_organisation_has_three_roles(org: Org) -> None:
    data = await org.admin.gql("{ getRoles { name archived color } }")
    assert sorted(role["name"] for role in data["getRoles"]) == ["Admin", "Employee", "Manager"]
    assert all(role["archived"] is False for role in data["getRoles"])
    bob = await org.add_member("Bob")
    data = await bob.gql('{ getRoles(filter: [{name: "MAN"}]) { name } }')
    assert data["getRoles"] == [{"name": "Manager"}]
    roles = await role_ids(org)
    data = await bob.gql(
        "query($a: SvcId, $b: SvcId) { getRoles(filter: [{id: $a, following: OR}, {id: $b}]) "
        "{ name } }",
        {"a": roles["Admin"], "b": roles["Employee"]},
    )
    assert [role["name"] for role in data["getRoles"]] == ["Admin", "Employee"]
    assert "filter[0]" in await bob.gql.error("{ getRoles(filter: [{}]) { name } }")


async def test_add_person_and_their_key_on_first_need(org: Org) -> None:
    person = await add_person(org, "Carla Chen", "Carla@Example.com")
    assert person["name"] == "Carla Chen"
    assert person["email"] == "carla@example.com"
    assert person["archived"] is False
    assert person["color"] == "#ff0000"
    assert person["role"]["name"] == "Employee"
    assert abs(person["startDate"]["ts"] - org.live.clock.now_ms()) < 60_000
    async with unit_of_work(org.live.service.sessions) as session:
        found = await session.get(Person, person["id"])
        assert found is not None
        key = await ensure_api_key(session, found, org.live.clock.now_ms())
    data = await org.gql_for(key)("{ currentPerson { id name role { name } } }")
    assert data["currentPerson"] == {
        "id": person["id"],
        "name": "Carla Chen",
        "role": {"name": "Employee"},
    }


async def test_add_person_bad_input_and_permission(org: Org) -> None:
    roles = await role_ids(org)
    await add_person(org, "Carla", "carla@example.com")
    query = (
        "mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) "
        "{ addPerson(name: $n, email: $e, roleId: $r) { id } }"
    )
    message = await org.admin.gql.error(
        query, {"n": "Other", "e": "CARLA@example.com", "r": roles["Employee"]}
    )
    assert '"email"' in message and "already uses" in message
    message = await org.admin.gql.error(
        query, {"n": "Other", "e": "other@example.com", "r": "0" * 24}
    )
    assert '"roleId"' in message
    message = await org.admin.gql.error(
        query, {"n": "Other", "e": "not-an-address", "r": roles["Employee"]}
    )
    assert "$e" in message or "email" in message.lower()
    message = await org.admin.gql.error(
        query, {"n": "  ", "e": "x@example.com", "r": roles["Employee"]}
    )
    assert "SvcName" in message
    bob = await org.add_member("Bob", role="manager")
    denied = await bob.gql.denied(query, {"n": "Eve", "e": "eve@example.com", "r": roles["Admin"]})
    assert denied == ["Mutation.addPerson"]
    count = await org.admin.gql("{ countPersons }")
    assert count["countPersons"] == 3


async def test_reading_people_filters_and_archived(org: Org) -> None:
    roles = await role_ids(org)
    carla = await add_person(org, "Carla Chen", "carla@example.com")
    dan = await add_person(org, "Dan Duke", "dan@example.com", role="Manager")
    erin = await add_person(org, "Erin Ek", "erin@example.com")
    bob = await org.add_member("Bob")
    async with unit_of_work(org.live.service.sessions) as session:
        tag = Tag(organisation_id=org.id, name="Berlin", created_ms=0)
        session.add(tag)
        await session.flush()
        tag_id = tag.id
        session.add(PersonTag(organisation_id=org.id, tag_id=tag_id, person_id=carla["id"]))
        child = Tag(organisation_id=org.id, name="Mitte", parent_id=tag_id, level=1, created_ms=0)
        session.add(child)
        await session.flush()
        # A tag includes the tags below it.
        session.add(PersonTag(organisation_id=org.id, tag_id=child.id, person_id=dan["id"]))
    await org.admin.gql(
        "mutation($id: SvcId!) { archivePerson(id: $id) { archived } }", {"id": erin["id"]}
    )

    async def names(query: str, variables: dict[str, Any] | None = None) -> list[str]:
        data = await bob.gql(query, variables)
        return [person["name"] for person in data["getPersons"]]

    # Everyone in the organisation reads people, active ones unless archived: true.
    assert await names("{ getPersons { name } }") == ["Ada Admin", "Bob", "Carla Chen", "Dan Duke"]
    assert "Erin Ek" in await names("{ getPersons(archived: true) { name } }")
    assert await names('{ getPersons(filter: [{name: "cHeN"}]) { name } }') == ["Carla Chen"]
    assert await names(
        "query($r: SvcId) { getPersons(filter: [{roleId: $r}]) { name } }",
        {"r": roles["Manager"]},
    ) == ["Dan Duke"]
    assert await names(
        "query($t: [SvcId]) { getPersons(filter: [{tagIds: $t}]) { name } }", {"t": [tag_id]}
    ) == ["Carla Chen", "Dan Duke"]
    assert await names(
        "query($t: [SvcId]) { getPersons(filter: [{notTagIds: $t}]) { name } }", {"t": [tag_id]}
    ) == ["Ada Admin", "Bob"]
    assert await names(
        "query($a: SvcId, $b: SvcId) { getPersons(filter: [{id: $a, following: OR}, {id: $b}]) "
        "{ name } }",
        {"a": carla["id"], "b": dan["id"]},
    ) == ["Carla Chen", "Dan Duke"]
    assert await names(
        'query($a: SvcId) { getPersons(filter: [{notId: $a}, {name: "a"}]) { name } }',
        {"a": carla["id"]},
    ) == ["Ada Admin", "Dan Duke"]
    assert await names("{ getPersons(archived: true, filter: [{archived: true}]) { name } }") == [
        "Erin Ek"
    ]
    data = await bob.gql(
        '{ countPersons(filter: [{name: "e"}]) all: countPersons(archived: true) '
        '  filterPersonIds(filter: [{name: "carla"}]) }'
    )
    assert data == {"countPersons": 2, "all": 5, "filterPersonIds": [carla["id"]]}
    data = await bob.gql(
        f"query($id: SvcId!) {{ getPerson(id: $id) {{ {PERSON} }} }}", {"id": erin["id"]}
    )
    assert data["getPerson"]["archived"] is True
    assert '"id"' in await bob.gql.error(
        "query($id: SvcId!) { getPerson(id: $id) { id } }", {"id": "f" * 24}
    )
    message = await bob.gql.error('{ getPersons(filter: [{name: "a"}, {}]) { id } }')
    assert '"filter[1]"' in message


async def test_archive_and_unarchive(org: Org) -> None:
    carla = await add_person(org, "Carla", "carla@example.com")
    dan = await add_person(org, "Dan", "dan@example.com")
    ids = [carla["id"], dan["id"]]
    data = await org.admin.gql(
        "mutation($ids: [SvcId]!) { archivePersons(ids: $ids) { id archived } }", {"ids": ids}
    )
    assert [p["archived"] for p in data["archivePersons"]] == [True, True]
    assert (await org.admin.gql("{ countPersons }"))["countPersons"] == 1
    data = await org.admin.gql(
        "mutation($id: SvcId!) { unarchivePerson(id: $id) { archived } }", {"id": carla["id"]}
    )
    assert data["unarchivePerson"]["archived"] is False
    data = await org.admin.gql(
        "mutation($ids: [SvcId]!) { unarchivePersons(ids: $ids) { archived } }", {"ids": ids}
    )
    assert [p["archived"] for p in data["unarchivePersons"]] == [False, False]
    data = await org.admin.gql(
        "mutation($id: SvcId!) { archivePerson(id: $id) { archived } }", {"id": dan["id"]}
    )
    assert data["archivePerson"]["archived"] is True
    # Bad input names the argument (and the position in a list); nothing is half-written.
    message = await org.admin.gql.error(
        "mutation($ids: [SvcId]!) { archivePersons(ids: $ids) { id } }",
        {"ids": [carla["id"], "a" * 24]},
    )
    assert '"ids[1]"' in message
    message = await org.admin.gql.error(
        "mutation($ids: [SvcId]!) { archivePersons(ids: $ids) { id } }",
        {"ids": [carla["id"], carla["id"]]},
    )
    assert '"ids[1]"' in message
    assert (await org.admin.gql("{ countPersons }"))["countPersons"] == 2
    message = await org.admin.gql.error(
        "mutation($id: SvcId!) { archivePerson(id: $id) { id } }", {"id": org.admin.id}
    )
    assert '"id"' in message and "yourself" in message
    bob = await org.add_member("Bob")
    for operation in ("archivePerson", "unarchivePerson"):
        denied = await bob.gql.denied(
            f"mutation($id: SvcId!) {{ {operation}(id: $id) {{ id }} }}", {"id": carla["id"]}
        )
        assert denied == [f"Mutation.{operation}"]
    for operation in ("archivePersons", "unarchivePersons"):
        denied = await bob.gql.denied(
            f"mutation($ids: [SvcId]!) {{ {operation}(ids: $ids) {{ id }} }}",
            {"ids": [carla["id"]]},
        )
        assert denied == [f"Mutation.{operation}"]


async def test_edit_person_fields(org: Org) -> None:
    roles = await role_ids(org)
    carla = await add_person(org, "Carla", "carla@example.com")
    dan = await add_person(org, "Dan", "dan@example.com")
    variables = {"id": carla["id"]}
    edits = {
        'editPersonName(id: $id, name: "Carla Chen") { name }': {"name": "Carla Chen"},
        'editPersonEmail(id: $id, email: "CC@example.com") { email }': {"email": "cc@example.com"},
        "editPersonStartDate(id: $id, startDate: 1767225600000) { startDate { ts iso } }": {
            "startDate": {"ts": 1767225600000, "iso": "2026-01-01T00:00:00.000Z"}
        },
        'editPersonColor(id: $id, color: "#00ff00") { color }': {"color": "#00ff00"},
        "editPersonColor(id: $id, color: null) { color }": {"color": None},
        'editPersonLang(id: $id, lang: "fr_ca") { lang }': {"lang": "fr-CA"},
    }
    for selection, expected in edits.items():
        data = await org.admin.gql(f"mutation($id: SvcId!) {{ {selection} }}", variables)
        assert next(iter(data.values())) == expected, selection
    data = await org.admin.gql(
        "mutation($id: SvcId!, $r: SvcId!) { editPersonRole(id: $id, roleId: $r) "
        "{ role { name } } }",
        {"id": carla["id"], "r": roles["Manager"]},
    )
    assert data["editPersonRole"]["role"]["name"] == "Manager"
    data = await org.admin.gql(
        f"query($id: SvcId!) {{ getPerson(id: $id) {{ {PERSON} }} }}", variables
    )
    assert data["getPerson"]["email"] == "cc@example.com"
    assert data["getPerson"]["role"]["name"] == "Manager"

    # Bad input names the argument.
    bad = {
        'editPersonEmail(id: $id, email: "dan@example.com") { id }': '"email"',
        'editPersonLang(id: $id, lang: "english!") { id }': '"lang"',
        "editPersonStartDate(id: $id, startDate: -5) { id }": '"startDate"',
        'editPersonRole(id: $id, roleId: "000000000000000000000000") { id }': '"roleId"',
    }
    for selection, argument in bad.items():
        message = await org.admin.gql.error(f"mutation($id: SvcId!) {{ {selection} }}", variables)
        assert argument in message, (selection, message)
    message = await org.admin.gql.error(
        'mutation { editPersonName(id: "abcdefabcdefabcdefabcdef", name: "X") { id } }'
    )
    assert '"id"' in message

    # Only an admin edits people; a person may change their own language.
    bob = await org.add_member("Bob")
    for selection in (
        'editPersonName(id: $id, name: "X") { id }',
        'editPersonEmail(id: $id, email: "x@example.com") { id }',
        "editPersonStartDate(id: $id, startDate: 0) { id }",
        "editPersonColor(id: $id, color: null) { id }",
        'editPersonLang(id: $id, lang: "de") { id }',
    ):
        denied = await bob.gql.denied(f"mutation($id: SvcId!) {{ {selection} }}", {"id": dan["id"]})
        assert len(denied) == 1 and denied[0].startswith("Mutation.editPerson"), denied
    denied = await bob.gql.denied(
        "mutation($id: SvcId!, $r: SvcId!) { editPersonRole(id: $id, roleId: $r) { id } }",
        {"id": bob.id, "r": roles["Admin"]},
    )
    assert denied == ["Mutation.editPersonRole"]
    data = await bob.gql(
        'mutation($id: SvcId!) { editPersonLang(id: $id, lang: "de") { lang } }', {"id": bob.id}
    )
    assert data["editPersonLang"]["lang"] == "de"


async def test_the_last_active_admin_stays(org: Org) -> None:
    roles = await role_ids(org)
    message = await org.admin.gql.error(
        "mutation($id: SvcId!, $r: SvcId!) { editPersonRole(id: $id, roleId: $r) { id } }",
        {"id": org.admin.id, "r": roles["Employee"]},
    )
    assert "at least one active administrator" in message
    other = await org.add_member("Olga", role="admin")
    data = await org.admin.gql(
        "mutation($id: SvcId!, $r: SvcId!) { editPersonRole(id: $id, roleId: $r) "
        "{ role { name } } }",
        {"id": other.id, "r": roles["Employee"]},
    )
    assert data["editPersonRole"]["role"]["name"] == "Employee"
    # Olga is no longer an admin: her key now refuses structural edits.
    denied = await other.gql.denied('mutation { editOrganisationName(name: "X") { id } }')
    assert denied == ["Mutation.editOrganisationName"]


async def test_delete_person_check_and_references(org: Org) -> None:
    carla = await add_person(org, "Carla", "carla@example.com")
    dan = await org.add_member("Dan")
    variables = {"id": dan.id}
    # check: true validates and changes nothing (no audit entry either).
    data = await org.admin.gql(
        "mutation($id: SvcId!) { deletePerson(id: $id, check: true) { id name } }", variables
    )
    assert data["deletePerson"] == {"id": dan.id, "name": "Dan"}
    assert (await dan.gql("{ currentPerson { id } }"))["currentPerson"]["id"] == dan.id
    trails = await org.admin.gql('{ getAuditTrails(operations: ["deletePerson"]) { responseId } }')
    assert trails["getAuditTrails"] == []

    # References (time records, expense records) block deletion, with and without check.
    now = org.live.clock.now_ms()
    async with unit_of_work(org.live.service.sessions) as session:
        session.add(
            TimeRecord(
                organisation_id=org.id,
                person_id=carla["id"],
                start_ms=now,
                duration_ms=3_600_000,
                created_ms=now,
                modified_ms=now,
            )
        )
        expense_type = ExpenseType(organisation_id=org.id, name="Taxi")
        session.add(expense_type)
        await session.flush()
        type_id = expense_type.id
    await org.admin.gql(
        "mutation($p: SvcId, $t: SvcId!) { addExpenseRecord(date: 0, expenseTypeId: $t, "
        "value: 100, personId: $p) { id } }",
        {"p": carla["id"], "t": type_id},
    )
    for check in ("true", "false"):
        message = await org.admin.gql.error(
            f"mutation($id: SvcId!) {{ deletePerson(id: $id, check: {check}) {{ id }} }}",
            {"id": carla["id"]},
        )
        assert "1 time record and 1 expense record" in message, message
    assert (await org.admin.gql("{ countPersons }"))["countPersons"] == 3

    message = await org.admin.gql.error(
        "mutation($id: SvcId!) { deletePerson(id: $id) { id } }", {"id": org.admin.id}
    )
    assert '"id"' in message and "yourself" in message
    denied = await dan.gql.denied(
        "mutation($id: SvcId!) { deletePerson(id: $id, check: true) { id } }", {"id": carla["id"]}
    )
    assert denied == ["Mutation.deletePerson"]

    # A real delete: the key stays, pointing nowhere.
    data = await org.admin.gql(
        "mutation($id: SvcId!) { deletePerson(id: $id) { id name } }", variables
    )
    assert data["deletePerson"] == {"id": dan.id, "name": "Dan"}
    assert await dan.gql.error("{ currentPerson { id } }") == "APIKeyError:CantFindLinkedAccount"
    assert '"id"' in await org.admin.gql.error(
        "mutation($id: SvcId!) { deletePerson(id: $id) { id } }", variables
    )


async def test_duplicate_person(org: Org) -> None:
    roles = await role_ids(org)
    carla = await add_person(org, "Carla", "carla@example.com")
    manager = await org.add_member("Mia", role="manager")
    await org.admin.gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, personId: $p) "
        "{ id } }",
        {"m": manager.id, "p": carla["id"]},
    )
    await org.admin.gql(
        'mutation($id: SvcId!) { editPersonLang(id: $id, lang: "nl") { id } }', {"id": carla["id"]}
    )
    query = (
        "mutation($id: SvcId!, $n: SvcName!, $e: SvcEmail, $r: SvcId) "
        f"{{ duplicatePerson(id: $id, name: $n, email: $e, roleId: $r) {{ {PERSON} }} }}"
    )
    first = (await org.admin.gql(query, {"id": carla["id"], "n": "Carla 2"}))["duplicatePerson"]
    assert first["email"] == "carla+copy1@example.com"
    assert (first["color"], first["lang"], first["role"]["name"]) == ("#ff0000", "nl", "Employee")
    assert first["id"] != carla["id"]
    second = await org.admin.gql(query, {"id": carla["id"], "n": "Carla 3"})
    assert second["duplicatePerson"]["email"] == "carla+copy2@example.com"
    third = await org.admin.gql(
        query, {"id": carla["id"], "n": "Carla 4", "e": "c4@example.com", "r": roles["Manager"]}
    )
    assert third["duplicatePerson"]["email"] == "c4@example.com"
    assert third["duplicatePerson"]["role"]["name"] == "Manager"
    async with unit_of_work(org.live.service.sessions) as session:
        managed = set(
            await session.scalars(
                select(PersonManager.person_id).where(PersonManager.manager_id == manager.id)
            )
        )
    assert managed == {
        carla["id"],
        first["id"],
        second["duplicatePerson"]["id"],
        third["duplicatePerson"]["id"],
    }
    message = await org.admin.gql.error(query, {"id": carla["id"], "n": "X", "e": "c4@example.com"})
    assert '"email"' in message
    message = await org.admin.gql.error(query, {"id": "b" * 24, "n": "X"})
    assert '"id"' in message
    message = await org.admin.gql.error(query, {"id": carla["id"], "n": "X", "r": "b" * 24})
    assert '"roleId"' in message
    denied = await manager.gql.denied(query, {"id": carla["id"], "n": "X"})
    assert denied == ["Mutation.duplicatePerson"]


async def test_people_managers(org: Org) -> None:
    mia = await org.add_member("Mia", role="manager")
    carla = await org.add_member("Carla")
    query = (
        "mutation($m: SvcId!, $p: SvcId!) { %s(managerId: $m, personId: $p) "
        "{ id sourceId sourceKey targetId targetKey signature startTime { ts } } }"
    )
    variables = {"m": mia.id, "p": carla.id}
    made = (await org.admin.gql(query % "makeManagerOfPerson", variables))["makeManagerOfPerson"]
    assert (made["sourceId"], made["sourceKey"]) == (mia.id, "managerOf")
    assert (made["targetId"], made["targetKey"]) == (carla.id, "managedBy")
    assert made["signature"] and made["startTime"] is None
    again = (await org.admin.gql(query % "makeManagerOfPerson", variables))["makeManagerOfPerson"]
    assert again["id"] == made["id"]
    # Everyone reads who manages whom, from either side.
    relations = (
        "query($id: SvcId!) { getPerson(id: $id) { relations { managedBy { relationId "
        "value { id name } startTime { ts } } managerOf { persons { value { id } } } } } }"
    )
    data = await carla.gql(relations, {"id": carla.id})
    assert data["getPerson"]["relations"] == {
        "managedBy": [
            {"relationId": made["id"], "value": {"id": mia.id, "name": "Mia"}, "startTime": None}
        ],
        "managerOf": {"persons": []},
    }
    data = await carla.gql(relations, {"id": mia.id})
    assert data["getPerson"]["relations"]["managerOf"] == {"persons": [{"value": {"id": carla.id}}]}
    assert data["getPerson"]["relations"]["managedBy"] == []

    # Mia now sees Carla's expense records (the manager rule), then no longer.
    async with unit_of_work(org.live.service.sessions) as session:
        expense_type = ExpenseType(organisation_id=org.id, name="Meals")
        session.add(expense_type)
        await session.flush()
        type_id = expense_type.id
    await carla.gql(
        "mutation($p: SvcId, $t: SvcId!) { addExpenseRecord(date: 5, expenseTypeId: $t, "
        "value: 990, personId: $p) { id } }",
        {"p": carla.id, "t": type_id},
    )
    records = "{ getExpenseRecords { person { id } } }"
    assert len((await mia.gql(records))["getExpenseRecords"]) == 1

    removed = await org.admin.gql(query % "removeManagerOfPerson", variables)
    assert removed["removeManagerOfPerson"]["id"] == made["id"]
    assert (await mia.gql(records))["getExpenseRecords"] == []
    data = await carla.gql(relations, {"id": carla.id})
    assert data["getPerson"]["relations"]["managedBy"] == []
    message = await org.admin.gql.error(query % "removeManagerOfPerson", variables)
    assert '"managerId"' in message and "is not a manager" in message

    message = await org.admin.gql.error(query % "makeManagerOfPerson", {"m": mia.id, "p": mia.id})
    assert '"personId"' in message
    message = await org.admin.gql.error(query % "makeManagerOfPerson", {"m": "c" * 24, "p": mia.id})
    assert '"managerId"' in message
    message = await org.admin.gql.error(query % "makeManagerOfPerson", {"m": mia.id, "p": "c" * 24})
    assert '"personId"' in message
    for operation in ("makeManagerOfPerson", "removeManagerOfPerson"):
        denied = await mia.gql.denied(query % operation, variables)
        assert denied == [f"Mutation.{operation}"]
