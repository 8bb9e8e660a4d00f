"""Expense types and expense records through POST /graphql."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from plumbing.db import unit_of_work
from service.models import (
    ExpenseRecord,
    Person,
    PersonManager,
    PersonTag,
    Project,
    ProjectManager,
    ProjectTag,
    Tag,
)
from tests.support import DAY_MS, Member, Org

RECORD = (
    "id date { ts } amount { value currency } comment expenseType { id name } "
    "person { id name } project { id name }"
)
ADD = (
    "mutation($date: SvcTimestamp!, $type: SvcId!, $value: Int!, $currency: SvcCurrency, "
    "$person: SvcId, $project: SvcId, $comment: String) { addExpenseRecord(date: $date, "
    "expenseTypeId: $type, value: $value, currency: $currency, personId: $person, "
    f"projectId: $project, comment: $comment) {{ {RECORD} }} }}"
)
T0 = 1_767_225_600_000  # 2026-01-01


async def add_type(org: Org, name: str = "Taxi") -> str:
    data = await org.admin.gql(
        'mutation($n: SvcName!) { addExpenseType(name: $n, color: "#123456") { id } }', {"n": name}
    )
    return str(data["addExpenseType"]["id"])


async def add_project(org: Org, name: str, parent_id: str | None = None) -> str:
    async with unit_of_work(org.live.service.sessions) as session:
        project = Project(organisation_id=org.id, name=name, parent_id=parent_id, created_ms=0)
        session.add(project)
        await session.flush()
        return project.id


async def add_record(member: Member, **variables: Any) -> dict[str, Any]:
    data = await member.gql(ADD, {"date": T0, "value": 1000, **variables})
    record: dict[str, Any] = data["addExpenseRecord"]
    return record


async def test_expense_types(org: Org) -> None:
    taxi = await add_type(org, "Taxi")
    hotel = await add_type(org, "hotel")
    bob = await org.add_member("Bob")
    data = await bob.gql("{ getExpenseTypes { name color archived } countExpenseTypes }")
    assert data["getExpenseTypes"] == [
        {"name": "hotel", "color": "#123456", "archived": False},
        {"name": "Taxi", "color": "#123456", "archived": False},
    ]
    assert data["countExpenseTypes"] == 2
    one = "mutation($id: SvcId!) { %s(id: $id) { id name archived color } }"
    archived = await org.admin.gql(one % "archiveExpenseType", {"id": taxi})
    assert archived["archiveExpenseType"]["archived"] is True
    data = await bob.gql(
        "{ a: getExpenseTypes { name } b: getExpenseTypes(archived: true) { name } "
        "  c: countExpenseTypes(archived: true, filter: [{archived: true}]) "
        '  d: getExpenseTypes(filter: [{name: "TEL"}]) { name } }'
    )
    assert data == {
        "a": [{"name": "hotel"}],
        "b": [{"name": "hotel"}, {"name": "Taxi"}],
        "c": 1,
        "d": [{"name": "hotel"}],
    }
    data = await bob.gql(
        "query($id: SvcId) { getExpenseTypes(archived: true, filter: [{notId: $id}]) { id } }",
        {"id": taxi},
    )
    assert data["getExpenseTypes"] == [{"id": hotel}]
    unarchived = await org.admin.gql(one % "unarchiveExpenseType", {"id": taxi})
    assert unarchived["unarchiveExpenseType"]["archived"] is False
    many = "mutation($ids: [SvcId]!) { %s(ids: $ids) { archived } }"
    data = await org.admin.gql(many % "archiveExpenseTypes", {"ids": [taxi, hotel]})
    assert data["archiveExpenseTypes"] == [{"archived": True}, {"archived": True}]
    data = await org.admin.gql(many % "unarchiveExpenseTypes", {"ids": [taxi, hotel]})
    assert data["unarchiveExpenseTypes"] == [{"archived": False}, {"archived": False}]
    data = await org.admin.gql(
        'mutation($id: SvcId!) { editExpenseTypeName(id: $id, name: "Cab") { name } '
        "  editExpenseTypeColor(id: $id, color: null) { color } "
        '  duplicateExpenseType(id: $id, name: "Cab 2") { id name color } }',
        {"id": taxi},
    )
    assert data["editExpenseTypeName"] == {"name": "Cab"}
    assert data["editExpenseTypeColor"] == {"color": None}
    copy = data["duplicateExpenseType"]
    assert copy["name"] == "Cab 2" and copy["id"] != taxi
    data = await bob.gql("query($id: SvcId!) { getExpenseType(id: $id) { name } }", {"id": taxi})
    assert data["getExpenseType"] == {"name": "Cab"}
    deleted = await org.admin.gql(one % "deleteExpenseType", {"id": copy["id"]})
    assert deleted["deleteExpenseType"]["name"] == "Cab 2"
    assert (await bob.gql("{ countExpenseTypes }"))["countExpenseTypes"] == 2

    # A type in use is not deleted; unknown ids and duplicates name the argument.
    await add_record(org.admin, type=taxi, person=org.admin.id)
    message = await org.admin.gql.error(one % "deleteExpenseType", {"id": taxi})
    assert "1 expense record use it" in message
    assert '"id"' in await org.admin.gql.error(one % "deleteExpenseType", {"id": "d" * 24})
    assert '"id"' in await bob.gql.error(
        "query($id: SvcId!) { getExpenseType(id: $id) { id } }", {"id": "d" * 24}
    )
    message = await org.admin.gql.error(many % "archiveExpenseTypes", {"ids": [taxi, "d" * 24]})
    assert '"ids[1]"' in message
    message = await org.admin.gql.error(many % "archiveExpenseTypes", {"ids": [taxi, taxi]})
    assert '"ids[1]"' in message
    assert '"filter[0]"' in await bob.gql.error("{ getExpenseTypes(filter: [{}]) { id } }")

    # Only admins edit expense types.
    for operation in (
        "archiveExpenseType",
        "unarchiveExpenseType",
        "deleteExpenseType",
    ):
        assert await bob.gql.denied(one % operation, {"id": taxi}) == [f"Mutation.{operation}"]
    for operation in ("archiveExpenseTypes", "unarchiveExpenseTypes"):
        assert await bob.gql.denied(many % operation, {"ids": [taxi]}) == [f"Mutation.{operation}"]
    for selection in (
        'addExpenseType(name: "X") { id }',
        'duplicateExpenseType(id: $id, name: "X") { id }',
        'editExpenseTypeName(id: $id, name: "X") { id }',
        "editExpenseTypeColor(id: $id, color: null) { id }",
    ):
        query = f"mutation($id: SvcId!) {{ {selection} }}"
        if "$id" not in selection:
            query = f"mutation {{ {selection} }}"
        denied = await bob.gql.denied(query, {"id": taxi} if "$id" in selection else None)
        assert len(denied) == 1 and denied[0].startswith("Mutation."), denied


async def test_add_expense_record_defaults_and_bad_input(org: Org) -> None:
    taxi = await add_type(org)
    bob = await org.add_member("Bob")
    project = await add_project(org, "Apollo")
    record = await add_record(bob, type=taxi, person=bob.id, comment="airport")
    assert record["amount"] == {"value": 1000, "currency": "EUR"}
    assert record["date"] == {"ts": T0}
    assert record["person"] == {"id": bob.id, "name": "Bob"}
    assert record["project"] is None
    assert record["comment"] == "airport"
    assert record["expenseType"] == {"id": taxi, "name": "Taxi"}
    # The person's currency wins over the organisation's; an explicit one over both.
    async with unit_of_work(org.live.service.sessions) as session:
        await session.execute(update(Person).where(Person.id == bob.id).values(currency="GBP"))
    record = await add_record(bob, type=taxi, person=bob.id)
    assert record["amount"]["currency"] == "GBP"
    record = await add_record(bob, type=taxi, person=bob.id, currency="usd", project=project)
    assert record["amount"] == {"value": 1000, "currency": "USD"}
    assert record["project"] == {"id": project, "name": "Apollo"}
    assert record["comment"] == ""
    record = await add_record(org.admin, type=taxi, project=project, value=0)
    assert record["person"] is None and record["amount"] == {"value": 0, "currency": "EUR"}

    async def refused(variables: dict[str, Any]) -> str:
        return await org.admin.gql.error(ADD, {"date": T0, "value": 1, "type": taxi, **variables})

    message = await refused({})
    assert "at least one of personId or projectId is required" in message
    assert '"value"' in await refused({"person": bob.id, "value": -1})
    assert '"personId"' in await refused({"person": "e" * 24})
    assert '"projectId"' in await refused({"project": "e" * 24})
    assert '"expenseTypeId"' in await refused({"person": bob.id, "type": "e" * 24})
    assert '"comment"' in await refused({"person": bob.id, "comment": "x" * 10_001})
    assert "currency" in (await refused({"person": bob.id, "currency": "euros"})).lower()
    await org.admin.gql(
        "mutation($id: SvcId!) { archiveExpenseType(id: $id) { id } }", {"id": taxi}
    )
    message = await refused({"person": bob.id})
    assert '"expenseTypeId"' in message and "archived" in message
    data = await org.admin.gql("{ getExpenseRecords { id } }")
    assert len(data["getExpenseRecords"]) == 4


async def test_who_may_add_and_see_expense_records(org: Org) -> None:
    taxi = await add_type(org)
    apollo = await add_project(org, "Apollo")
    gemini = await add_project(org, "Gemini")
    mia = await org.add_member("Mia", role="manager")
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    await org.admin.gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m, personId: $p) "
        "{ id } }",
        {"m": mia.id, "p": bob.id},
    )
    async with unit_of_work(org.live.service.sessions) as session:
        session.add(ProjectManager(organisation_id=org.id, project_id=apollo, person_id=eve.id))

    own = await add_record(bob, type=taxi, person=bob.id)
    by_manager = await add_record(mia, type=taxi, person=bob.id, date=T0 + DAY_MS)
    mias = await add_record(mia, type=taxi, person=mia.id)
    eves = await add_record(eve, type=taxi, person=eve.id)
    on_apollo = await add_record(eve, type=taxi, project=apollo)
    on_gemini = await add_record(org.admin, type=taxi, project=gemini)

    # Refusals: another person's data, a project one does not manage.
    query = ADD
    base = {"date": T0, "value": 1, "type": taxi}
    assert await bob.gql.denied(query, {**base, "person": eve.id}) == ["Mutation.addExpenseRecord"]
    assert await mia.gql.denied(query, {**base, "person": eve.id}) == ["Mutation.addExpenseRecord"]
    assert await bob.gql.denied(query, {**base, "project": apollo}) == ["Mutation.addExpenseRecord"]
    assert await eve.gql.denied(query, {**base, "project": gemini}) == ["Mutation.addExpenseRecord"]

    async def visible(member: Member) -> set[str]:
        data = await member.gql("{ getExpenseRecords { id } }")
        return {record["id"] for record in data["getExpenseRecords"]}

    assert await visible(bob) == {own["id"], by_manager["id"]}
    assert await visible(mia) == {own["id"], by_manager["id"], mias["id"]}
    assert await visible(eve) == {eves["id"], on_apollo["id"]}
    everything = {r["id"] for r in (own, by_manager, mias, eves, on_apollo, on_gemini)}
    assert await visible(org.admin) == everything

    single = "query($id: SvcId!) { getExpenseRecord(id: $id) { id } }"
    assert (await mia.gql(single, {"id": own["id"]}))["getExpenseRecord"]["id"] == own["id"]
    assert await bob.gql.denied(single, {"id": mias["id"]}) == ["Query.getExpenseRecord"]
    assert await bob.gql.denied(single, {"id": on_apollo["id"]}) == ["Query.getExpenseRecord"]
    assert '"id"' in await bob.gql.error(single, {"id": "9" * 24})
    for record in (own, by_manager, mias, on_gemini):
        assert await eve.gql.denied(single, {"id": record["id"]}) == ["Query.getExpenseRecord"]

    # Edits and deletion follow the same rule.
    edit = 'mutation($id: SvcId!) { editExpenseRecordComment(id: $id, comment: "x") { id } }'
    assert await bob.gql.denied(edit, {"id": mias["id"]}) == ["Mutation.editExpenseRecordComment"]
    await mia.gql(edit, {"id": own["id"]})
    delete = "mutation($id: SvcId!) { deleteExpenseRecord(id: $id) { id } }"
    assert await bob.gql.denied(delete, {"id": eves["id"]}) == ["Mutation.deleteExpenseRecord"]
    data = await eve.gql(delete, {"id": on_apollo["id"]})
    assert data["deleteExpenseRecord"]["id"] == on_apollo["id"]
    assert '"id"' in await eve.gql.error(delete, {"id": on_apollo["id"]})


async def test_time_window_and_filters(org: Org) -> None:
    taxi = await add_type(org)
    apollo = await add_project(org, "Apollo")
    apollo_sub = await add_project(org, "Apollo 11", parent_id=apollo)
    gemini = await add_project(org, "Gemini")
    bob = await org.add_member("Bob")
    cleo = await org.add_member("Cleo")
    async with unit_of_work(org.live.service.sessions) as session:
        tag = Tag(organisation_id=org.id, name="Remote", created_ms=0)
        session.add(tag)
        await session.flush()
        tag_id = tag.id
        session.add(PersonTag(organisation_id=org.id, tag_id=tag_id, person_id=cleo.id))
        session.add(ProjectTag(organisation_id=org.id, tag_id=tag_id, project_id=gemini))
    a = await add_record(org.admin, type=taxi, person=bob.id, project=apollo, date=T0)
    b = await add_record(org.admin, type=taxi, person=bob.id, project=apollo_sub, date=T0 + DAY_MS)
    c = await add_record(org.admin, type=taxi, person=cleo.id, date=T0 + 2 * DAY_MS)
    d = await add_record(org.admin, type=taxi, project=gemini, date=T0 + 3 * DAY_MS)

    async def ids(
        filter_: Any = None, start: int | None = None, end: int | None = None
    ) -> list[str]:
        data = await org.admin.gql(
            "query($s: SvcTimestamp, $e: SvcTimestamp, $f: [SvcExpenseRecordFilter]) "
            "{ getExpenseRecords(startTime: $s, endTime: $e, filter: $f) { id } }",
            {"s": start, "e": end, "f": filter_},
        )
        return [record["id"] for record in data["getExpenseRecords"]]

    assert await ids() == [a["id"], b["id"], c["id"], d["id"]]
    assert await ids(start=T0 + DAY_MS, end=T0 + 3 * DAY_MS) == [b["id"], c["id"]]
    assert await ids(start=T0 + 3 * DAY_MS) == [d["id"]]
    assert await ids(end=T0 + 1) == [a["id"]]
    assert await ids([{"personId": bob.id}]) == [a["id"], b["id"]]
    assert await ids([{"notPersonId": bob.id}]) == [c["id"], d["id"]]
    assert await ids([{"projectId": apollo}]) == [a["id"], b["id"]]
    assert await ids([{"projectId": apollo_sub}]) == [b["id"]]
    assert await ids([{"notProjectId": apollo}]) == [c["id"], d["id"]]
    assert await ids([{"personTagIds": [tag_id]}]) == [c["id"]]
    assert await ids([{"personNotTagIds": [tag_id]}]) == [a["id"], b["id"], d["id"]]
    assert await ids([{"projectTagIds": [tag_id]}]) == [d["id"]]
    assert await ids([{"projectNotTagIds": [tag_id]}]) == [a["id"], b["id"], c["id"]]
    assert await ids([{"id": a["id"], "following": "OR"}, {"id": d["id"]}]) == [a["id"], d["id"]]
    assert await ids([{"notId": a["id"]}, {"personId": bob.id}]) == [b["id"]]

    message = await org.admin.gql.error("{ getExpenseRecords(startTime: 10, endTime: 5) { id } }")
    assert '"endTime"' in message
    assert '"filter[0]"' in await org.admin.gql.error("{ getExpenseRecords(filter: [{}]) { id } }")


async def test_edit_expense_records(org: Org) -> None:
    taxi = await add_type(org, "Taxi")
    hotel = await add_type(org, "Hotel")
    apollo = await add_project(org, "Apollo")
    bob = await org.add_member("Bob")
    cleo = await org.add_member("Cleo")
    record = await add_record(bob, type=taxi, person=bob.id)
    variables = {"id": record["id"]}
    edits: dict[str, Any] = {
        "editExpenseRecordDate(id: $id, date: 1767312000000) { date { ts } }": {
            "date": {"ts": 1767312000000}
        },
        f'editExpenseRecordExpense(id: $id, expenseTypeId: "{hotel}") {{ expenseType {{ id }}}}': {
            "expenseType": {"id": hotel}
        },
        "editExpenseRecordAmountValue(id: $id, value: 4250) { amount { value currency } }": {
            "amount": {"value": 4250, "currency": "EUR"}
        },
        'editExpenseRecordAmountCurrency(id: $id, currency: "chf") { amount { value currency } }': {
            "amount": {"value": 4250, "currency": "CHF"}
        },
        'editExpenseRecordComment(id: $id, comment: "two nights") { comment }': {
            "comment": "two nights"
        },
        f'editExpenseRecordProject(id: $id, projectId: "{apollo}") {{ project {{ id }} }}': {
            "project": {"id": apollo}
        },
    }
    for selection, expected in edits.items():
        data = await bob.gql(f"mutation($id: SvcId!) {{ {selection} }}", variables)
        assert next(iter(data.values())) == expected, selection

    # An employee may not move the record to someone else; an admin may.
    person = (
        "mutation($id: SvcId!, $p: SvcId) { editExpenseRecordPerson(id: $id, personId: $p) "
        "{ person { id } project { id } } }"
    )
    denied = await bob.gql.denied(person, {"id": record["id"], "p": cleo.id})
    assert denied == ["Mutation.editExpenseRecordPerson"]
    # Nor leave it on the project only (it would no longer be theirs to see).
    denied = await bob.gql.denied(person, {"id": record["id"], "p": None})
    assert denied == ["Mutation.editExpenseRecordPerson"]
    data = await org.admin.gql(person, {"id": record["id"], "p": cleo.id})
    assert data["editExpenseRecordPerson"]["person"] == {"id": cleo.id}
    data = await org.admin.gql(person, {"id": record["id"], "p": None})
    assert data["editExpenseRecordPerson"] == {"person": None, "project": {"id": apollo}}

    # At least one of person and project stays.
    project = (
        "mutation($id: SvcId!, $p: SvcId) { editExpenseRecordProject(id: $id, projectId: $p) "
        "{ project { id } } }"
    )
    message = await org.admin.gql.error(project, {"id": record["id"], "p": None})
    assert '"projectId"' in message and "at least one of personId or projectId" in message
    await org.admin.gql(person, {"id": record["id"], "p": bob.id})
    data = await org.admin.gql(project, {"id": record["id"], "p": None})
    assert data["editExpenseRecordProject"]["project"] is None
    message = await org.admin.gql.error(person, {"id": record["id"], "p": None})
    assert '"personId"' in message and "at least one of personId or projectId" in message

    # Bad input names the argument, and leaves the record as it was.
    bad = {
        "editExpenseRecordAmountValue(id: $id, value: -3) { id }": '"value"',
        'editExpenseRecordExpense(id: $id, expenseTypeId: "%s") { id }': '"expenseTypeId"',
        'editExpenseRecordProject(id: $id, projectId: "%s") { id }': '"projectId"',
        'editExpenseRecordPerson(id: $id, personId: "%s") { id }': '"personId"',
        'editExpenseRecordComment(id: $id, comment: "%s") { id }' % ("y" * 10_001): '"comment"',
    }
    for selection, argument in bad.items():
        if "%s" in selection:
            selection = selection % ("a" * 24)
        message = await org.admin.gql.error(f"mutation($id: SvcId!) {{ {selection} }}", variables)
        assert argument in message, (selection[:80], message)
    message = await org.admin.gql.error(
        'mutation { editExpenseRecordDate(id: "%s", date: 0) { id } }' % ("a" * 24)
    )
    assert '"id"' in message
    async with unit_of_work(org.live.service.sessions) as session:
        stored = (
            await session.scalars(select(ExpenseRecord).where(ExpenseRecord.id == record["id"]))
        ).one()
        assert (stored.value, stored.currency, stored.comment) == (4250, "CHF", "two nights")
        assert stored.expense_type_id == hotel and stored.person_id == bob.id

    # A manager edits the records of the people they manage.
    mia = await org.add_member("Mia", role="manager")
    edit = "mutation($id: SvcId!) { editExpenseRecordAmountValue(id: $id, value: 1) { id } }"
    assert await mia.gql.denied(edit, variables) == ["Mutation.editExpenseRecordAmountValue"]
    async with unit_of_work(org.live.service.sessions) as session:
        session.add(
            PersonManager(organisation_id=org.id, manager_id=mia.id, person_id=bob.id, created_ms=0)
        )
    await mia.gql(edit, variables)
