"""Projects, project categories and project managers through POST /graphql."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, insert, select

from plumbing.db import unit_of_work
from service.access.project_managers import project_manager_ids
from service.models import AuditTrail, ExpenseRecord, ExpenseType, TimeRecord, time_record_projects
from tests.support import Org

ADD = """mutation($name: SvcName!, $categoryId: SvcId, $parentId: SvcId, $color: SvcColor) {
  addProject(name: $name, categoryId: $categoryId, parentId: $parentId, color: $color) {
    id name level color archived category { id name } parent { id name }
  }
}"""
GET = """query($id: SvcId!) { getProject(id: $id) {
  id name level color archived availability { value } category { id name levelNames }
  parent { id } managedBy { id name }
} }"""
LIST = """query($filter: [SvcProjectFilter], $archived: Boolean, $categoryId: SvcId) {
  getProjects(filter: $filter, archived: $archived, categoryId: $categoryId) { id name }
  countProjects(filter: $filter, archived: $archived, categoryId: $categoryId)
  filterProjectIds(filter: $filter, archived: $archived, categoryId: $categoryId)
}"""


async def add(org: Org, name: str, **variables: Any) -> dict[str, Any]:
    data = await org.admin.gql(ADD, {"name": name, **variables})
    return data["addProject"]  # type: ignore[no-any-return]


async def ids(org: Org, **variables: Any) -> list[str]:
    data = await org.admin.gql(LIST, variables)
    assert data["countProjects"] == len(data["getProjects"])
    assert data["filterProjectIds"] == [p["id"] for p in data["getProjects"]]
    return list(data["filterProjectIds"])


async def test_projects_subprojects_levels_and_categories(org: Org) -> None:
    gql = org.admin.gql
    client = (await gql('mutation { addProjectCategory(name: "Clients") { id name levelNames } }'))[
        "addProjectCategory"
    ]
    assert client["levelNames"] == []
    internal = (await gql('mutation { addProjectCategory(name: "Internal") { id } }'))[
        "addProjectCategory"
    ]
    acme = await add(org, "Acme", categoryId=client["id"], color="#ff0000")
    assert acme["level"] == 0 and acme["parent"] is None and acme["color"] == "#ff0000"
    website = await add(org, "Website", parentId=acme["id"])
    assert website["level"] == 1
    assert website["category"]["id"] == client["id"], "a subproject inherits the category"
    assert website["parent"] == {"id": acme["id"], "name": "Acme"}
    pages = await add(org, "Pages", parentId=website["id"], categoryId=internal["id"])
    assert pages["level"] == 2 and pages["category"]["id"] == internal["id"]

    # Without a category a project goes to the oldest category.
    loose = await add(org, "Loose")
    assert loose["category"]["id"] == client["id"]

    got = (await gql(GET, {"id": pages["id"]}))["getProject"]
    assert got["parent"]["id"] == website["id"]
    assert got["availability"] == {"value": None}
    assert got["managedBy"] == []

    data = await gql(
        "mutation($id: SvcId!) { editProjectCategoryName(id: $id, name: \"Customers\") { name }"
        "  editProjectCategoryLevelNames(id: $id, levelNames: [\"Client\", \"Project\"]) {"
        "    levelNames } }",
        {"id": client["id"]},
    )
    assert data["editProjectCategoryName"]["name"] == "Customers"
    assert data["editProjectCategoryLevelNames"]["levelNames"] == ["Client", "Project"]
    categories = (await gql("{ getProjectCategories { id name levelNames } }"))[
        "getProjectCategories"
    ]
    assert [c["name"] for c in categories] == ["Customers", "Internal"]

    message = await gql.error(
        'mutation($id: SvcId!) { editProjectCategoryLevelNames(id: $id, levelNames: ["a", null])'
        " { id } }",
        {"id": client["id"]},
    )
    assert 'Invalid argument "levelNames[1]"' in message
    message = await gql.error(
        "mutation($id: SvcId!) { deleteProjectCategory(id: $id) { id } }", {"id": internal["id"]}
    )
    assert "Internal" in message and "1 project" in message
    spare = (await gql('mutation { addProjectCategory(name: "Spare") { id } }'))[
        "addProjectCategory"
    ]
    deleted = await gql(
        "mutation($id: SvcId!) { deleteProjectCategory(id: $id) { id name } }", {"id": spare["id"]}
    )
    assert deleted["deleteProjectCategory"]["name"] == "Spare"
    assert len((await gql("{ getProjectCategories { id } }"))["getProjectCategories"]) == 2

    # Bad input names the argument.
    message = await gql.error(ADD, {"name": "X", "parentId": "0" * 24})
    assert message.startswith('Invalid argument "parentId"')
    message = await gql.error(ADD, {"name": "X", "categoryId": "0" * 24})
    assert message.startswith('Invalid argument "categoryId"')
    message = await gql.error(GET, {"id": "f" * 24})
    assert message.startswith('Invalid argument "id"')


async def test_default_category_is_created_on_first_need(org: Org) -> None:
    project = await add(org, "Solo")
    assert project["category"]["name"] == "Projects"
    again = await add(org, "Duo")
    assert again["category"]["id"] == project["category"]["id"]


async def test_filters_and_archived(org: Org) -> None:
    gql = org.admin.gql
    alpha = await add(org, "Alpha")
    other_category = (await gql('mutation { addProjectCategory(name: "B") { id } }'))[
        "addProjectCategory"
    ]
    alpha_sub = await add(org, "alpha web", parentId=alpha["id"])
    beta = await add(org, "Beta", categoryId=other_category["id"])
    gamma = await add(org, "Gamma")

    assert await ids(org) == [alpha["id"], alpha_sub["id"], beta["id"], gamma["id"]]
    assert await ids(org, filter=[{"name": "ALPHA"}]) == [alpha["id"], alpha_sub["id"]]
    assert await ids(org, filter=[{"level": 1}]) == [alpha_sub["id"]]
    assert await ids(org, filter=[{"id": beta["id"]}]) == [beta["id"]]
    assert await ids(org, filter=[{"notId": beta["id"]}, {"level": 0}]) == [
        alpha["id"], gamma["id"]
    ]
    assert await ids(org, filter=[{"id": beta["id"], "following": "OR"}, {"id": gamma["id"]}]) == [
        beta["id"], gamma["id"]
    ]
    assert await ids(org, categoryId=other_category["id"]) == [beta["id"]]
    assert await ids(org, filter=[{"categoryId": other_category["id"]}]) == [beta["id"]]
    assert await ids(org, filter=[{"subProjectId": alpha_sub["id"]}]) == [alpha["id"]]

    # Tags on projects.
    tag = (await gql('mutation { addTag(name: "Billable") { id } }'))["addTag"]
    relation = await gql(
        "mutation($t: SvcId!, $p: SvcId!) { tagProject(tagId: $t, projectId: $p) {"
        " sourceId targetId } }",
        {"t": tag["id"], "p": beta["id"]},
    )
    assert relation["tagProject"] == {"sourceId": tag["id"], "targetId": beta["id"]}
    assert await ids(org, filter=[{"tagIds": [tag["id"]]}]) == [beta["id"]]
    assert beta["id"] not in await ids(org, filter=[{"notTagIds": [tag["id"]]}])

    # Managers: a parent's manager manages the subprojects too.
    bob = await org.add_member("Bob", role="manager")
    await gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfProject(managerId: $m, projectId: $p)"
        " { id } }",
        {"m": bob.id, "p": alpha["id"]},
    )
    assert await ids(org, filter=[{"managedById": bob.id}]) == [alpha["id"], alpha_sub["id"]]

    # Archived: active only unless archived: true.
    archived = await gql(
        "mutation($id: SvcId!) { archiveProject(id: $id) { id archived } }", {"id": gamma["id"]}
    )
    assert archived["archiveProject"] == [{"id": gamma["id"], "archived": True}]
    assert gamma["id"] not in await ids(org)
    assert gamma["id"] in await ids(org, archived=True)
    assert await ids(org, filter=[{"archived": True}]) == [gamma["id"]]

    # A filter object naming no field is refused, naming it.
    message = await gql.error(LIST, {"filter": [{"name": "a"}, {"following": "OR"}]})
    assert message.startswith('Invalid argument "filter[1]"')


async def test_archive_unarchive_and_edits(org: Org) -> None:
    gql = org.admin.gql
    root = await add(org, "Root")
    child = await add(org, "Child", parentId=root["id"])
    grandchild = await add(org, "Grandchild", parentId=child["id"])
    other = await add(org, "Other")

    data = await gql(
        "mutation($id: SvcId!) { archiveProject(id: $id) { id archived } }", {"id": root["id"]}
    )
    assert {p["id"] for p in data["archiveProject"]} == {root["id"], child["id"], grandchild["id"]}
    assert all(p["archived"] for p in data["archiveProject"])
    assert await ids(org) == [other["id"]]
    message = await gql.error(ADD, {"name": "Late", "parentId": root["id"]})
    assert message.startswith('Invalid argument "parentId"') and "archived" in message
    data = await gql(
        "mutation($id: SvcId!) { unarchiveProject(id: $id) { id archived } }", {"id": root["id"]}
    )
    assert data["unarchiveProject"] == {"id": root["id"], "archived": False}
    data = await gql(
        "mutation($ids: [SvcId]!) { unarchiveProjects(ids: $ids) { id } }",
        {"ids": [child["id"], grandchild["id"]]},
    )
    assert len(data["unarchiveProjects"]) == 2
    data = await gql(
        "mutation($ids: [SvcId]!) { archiveProjects(ids: $ids) { id } }",
        {"ids": [other["id"], grandchild["id"]]},
    )
    assert {p["id"] for p in data["archiveProjects"]} == {other["id"], grandchild["id"]}
    message = await gql.error(
        "mutation($ids: [SvcId]!) { archiveProjects(ids: $ids) { id } }",
        {"ids": [root["id"], "a" * 24]},
    )
    assert message.startswith('Invalid argument "ids[1]"')
    assert root["id"] in await ids(org), "nothing was archived by the failed batch"

    data = await gql(
        "mutation($id: SvcId!) {"
        '  editProjectName(id: $id, name: "Renamed") { name }'
        '  editProjectColor(id: $id, color: "blue") { color }'
        "  editProjectAvailability(id: $id, availability: false) { availability { value } } }",
        {"id": root["id"]},
    )
    assert data["editProjectName"]["name"] == "Renamed"
    assert data["editProjectColor"]["color"] == "blue"
    assert data["editProjectAvailability"]["availability"] == {"value": False}


async def test_edit_parent_recomputes_levels_and_refuses_cycles(org: Org) -> None:
    gql = org.admin.gql
    move = "mutation($id: SvcId!, $p: SvcId) { editProjectParent(id: $id, parentId: $p) { id level parent { id } } }"  # noqa: E501
    a = await add(org, "A")
    b = await add(org, "B", parentId=a["id"])
    c = await add(org, "C", parentId=b["id"])
    top = await add(org, "Top")
    mid = await add(org, "Mid", parentId=top["id"])

    data = await gql(move, {"id": b["id"], "p": mid["id"]})
    assert data["editProjectParent"]["level"] == 2
    assert (await gql(GET, {"id": c["id"]}))["getProject"]["level"] == 3

    message = await gql.error(move, {"id": top["id"], "p": c["id"]})
    assert message.startswith('Invalid argument "parentId"')
    message = await gql.error(move, {"id": top["id"], "p": top["id"]})
    assert message.startswith('Invalid argument "parentId"')
    message = await gql.error(move, {"id": top["id"], "p": "b" * 24})
    assert message.startswith('Invalid argument "parentId"')

    data = await gql(move, {"id": b["id"], "p": None})
    assert data["editProjectParent"] == {"id": b["id"], "level": 0, "parent": None}
    assert (await gql(GET, {"id": c["id"]}))["getProject"]["level"] == 1


async def test_duplicate_project(org: Org) -> None:
    gql = org.admin.gql
    category = (await gql('mutation { addProjectCategory(name: "K") { id } }'))[
        "addProjectCategory"
    ]
    source = await add(org, "Source", categoryId=category["id"], color="red")
    target_parent = await add(org, "Parent")
    bob = await org.add_member("Bob", role="manager")
    await gql(
        "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfProject(managerId: $m, projectId: $p)"
        " { id } }",
        {"m": bob.id, "p": source["id"]},
    )
    data = await gql(
        "mutation($id: SvcId!, $p: SvcId) { duplicateProject(id: $id, parentId: $p, name: \"Copy\")"
        " { id name level color category { id } parent { id } managedBy { id } } }",
        {"id": source["id"], "p": target_parent["id"]},
    )
    copy = data["duplicateProject"]
    assert copy["id"] != source["id"] and copy["name"] == "Copy"
    assert copy["level"] == 1 and copy["parent"]["id"] == target_parent["id"]
    assert copy["color"] == "red" and copy["category"]["id"] == category["id"]
    assert copy["managedBy"] == [{"id": bob.id}]
    message = await gql.error(
        'mutation { duplicateProject(id: "cccccccccccccccccccccccc", name: "X") { id } }'
    )
    assert message.startswith('Invalid argument "id"')


async def _audit_count(org: Org, operation: str) -> int:
    async with unit_of_work(org.live.service.sessions) as session:
        count = await session.scalar(
            select(func.count()).select_from(AuditTrail).where(
                AuditTrail.organisation_id == org.id, AuditTrail.operation_name == operation
            )
        )
    return int(count or 0)


async def test_delete_checks_references(org: Org) -> None:
    gql = org.admin.gql
    delete = "mutation($id: SvcId!, $check: Boolean) { deleteProject(id: $id, check: $check) { id name } }"  # noqa: E501
    parent = await add(org, "Parent")
    child = await add(org, "Child", parentId=parent["id"])
    logged = await add(org, "Logged")
    spent = await add(org, "Spent")
    free = await add(org, "Free")
    now = org.live.clock.now_ms()
    async with unit_of_work(org.live.service.sessions) as session:
        record = TimeRecord(
            organisation_id=org.id, person_id=org.admin.id, start_ms=now, duration_ms=3_600_000,
            comment="", created_ms=now, modified_ms=now,
        )
        expense_type = ExpenseType(organisation_id=org.id, name="Travel")
        session.add_all([record, expense_type])
        await session.flush()
        await session.execute(
            insert(time_record_projects).values(time_record_id=record.id, project_id=logged["id"])
        )
        session.add(ExpenseRecord(
            organisation_id=org.id, date_ms=now, expense_type_id=expense_type.id, value=100,
            currency="EUR", project_id=spent["id"], comment="", created_ms=now,
        ))

    message = await gql.error(delete, {"id": parent["id"], "check": True})
    assert "1 subproject" in message
    message = await gql.error(delete, {"id": logged["id"]})
    assert "1 time record" in message
    message = await gql.error(delete, {"id": spent["id"], "check": True})
    assert "1 expense record" in message

    data = await gql(delete, {"id": free["id"], "check": True})
    assert data["deleteProject"]["name"] == "Free"
    assert free["id"] in await ids(org), "check: true deletes nothing"
    assert await _audit_count(org, "deleteProject") == 0, "check: true is not audited"
    data = await gql(delete, {"id": free["id"]})
    assert data["deleteProject"]["id"] == free["id"]
    assert free["id"] not in await ids(org)
    assert await _audit_count(org, "deleteProject") == 1

    # A parent deleted together with its subproject is fine; a failed batch deletes nothing.
    message = await gql.error(
        "mutation($ids: [SvcId]!) { deleteProjects(ids: $ids) { id } }",
        {"ids": [child["id"], logged["id"]]},
    )
    assert "Logged" in message
    assert child["id"] in await ids(org)
    data = await gql(
        "mutation($ids: [SvcId]!) { deleteProjects(ids: $ids) { id } }",
        {"ids": [parent["id"], child["id"]]},
    )
    assert {p["id"] for p in data["deleteProjects"]} == {parent["id"], child["id"]}
    assert await ids(org) == [logged["id"], spent["id"]]


async def test_project_managers(org: Org) -> None:
    gql = org.admin.gql
    make = "mutation($m: SvcId!, $p: SvcId!) { makeManagerOfProject(managerId: $m, projectId: $p) { id sourceId sourceKey targetId targetKey signature } }"  # noqa: E501
    remove = "mutation($m: SvcId!, $p: SvcId!) { removeManagerOfProject(managerId: $m, projectId: $p) { id sourceId targetId } }"  # noqa: E501
    parent = await add(org, "Parent")
    sub = await add(org, "Sub", parentId=parent["id"])
    elsewhere = await add(org, "Elsewhere")
    mia = await org.add_member("Mia", role="manager")
    eve = await org.add_member("Eve")

    relation = (await gql(make, {"m": mia.id, "p": parent["id"]}))["makeManagerOfProject"]
    assert relation["sourceId"] == mia.id and relation["targetId"] == parent["id"]
    assert relation["sourceKey"] and relation["targetKey"] and relation["signature"]
    again = (await gql(make, {"m": mia.id, "p": parent["id"]}))["makeManagerOfProject"]
    assert again["id"] == relation["id"], "making a manager twice is idempotent"
    got = (await gql(GET, {"id": parent["id"]}))["getProject"]
    assert got["managedBy"] == [{"id": mia.id, "name": "Mia"}]

    async with unit_of_work(org.live.service.sessions) as session:
        assert await project_manager_ids(session, org.id, sub["id"]) == {mia.id}
        assert await project_manager_ids(session, org.id, elsewhere["id"]) == set()

    # A manager edits the projects they manage (subprojects included), not others.
    data = await mia.gql(
        'mutation($id: SvcId!) { editProjectName(id: $id, name: "Sub 2") { name } }',
        {"id": sub["id"]},
    )
    assert data["editProjectName"]["name"] == "Sub 2"
    denied = await mia.gql.denied(
        'mutation($id: SvcId!) { editProjectColor(id: $id, color: "x") { id } }',
        {"id": elsewhere["id"]},
    )
    assert denied == ["Mutation.editProjectColor"]
    denied = await mia.gql.denied(make, {"m": mia.id, "p": elsewhere["id"]})
    assert denied == ["Mutation.makeManagerOfProject"]

    message = await gql.error(make, {"m": "d" * 24, "p": parent["id"]})
    assert message.startswith('Invalid argument "managerId"')
    message = await gql.error(make, {"m": mia.id, "p": "d" * 24})
    assert message.startswith('Invalid argument "projectId"')
    message = await gql.error(remove, {"m": eve.id, "p": parent["id"]})
    assert message.startswith('Invalid argument "managerId"')

    removed = (await gql(remove, {"m": mia.id, "p": parent["id"]}))["removeManagerOfProject"]
    assert removed["id"] == relation["id"]
    assert (await gql(GET, {"id": parent["id"]}))["getProject"]["managedBy"] == []

    await gql(make, {"m": mia.id, "p": parent["id"]})
    await gql(make, {"m": mia.id, "p": elsewhere["id"]})
    data = await gql(
        "mutation($m: SvcId!) { resetManagedProjects(managerId: $m) { id name } }", {"m": mia.id}
    )
    assert data["resetManagedProjects"] == {"id": mia.id, "name": "Mia"}
    assert await ids(org, filter=[{"managedById": mia.id}]) == []

    owners = await eve.gql(
        "query($p: SvcId!) { getPotentialProjectOwners(projectId: $p) { id } }",
        {"p": parent["id"]},
    )
    assert {p["id"] for p in owners["getPotentialProjectOwners"]} == {org.admin.id, mia.id}
    message = await gql.error(
        'query { getPotentialProjectOwners(projectId: "eeeeeeeeeeeeeeeeeeeeeeee") { id } }'
    )
    assert message.startswith('Invalid argument "projectId"')


async def test_employees_read_but_do_not_edit(org: Org) -> None:
    project = await add(org, "Visible")
    eve = await org.add_member("Eve")
    data = await eve.gql(LIST, {})
    assert [p["id"] for p in data["getProjects"]] == [project["id"]]
    assert (await eve.gql("{ getProjectCategories { id } }"))["getProjectCategories"]
    for mutation, variables in [
        (ADD, {"name": "Nope"}),
        ('mutation($id: SvcId!) { editProjectName(id: $id, name: "N") { id } }',
         {"id": project["id"]}),
        ("mutation($id: SvcId!) { deleteProject(id: $id) { id } }", {"id": project["id"]}),
        ("mutation($id: SvcId!) { archiveProject(id: $id) { id } }", {"id": project["id"]}),
        ("mutation($id: SvcId!) { editProjectParent(id: $id) { id } }", {"id": project["id"]}),
        ('mutation { addProjectCategory(name: "N") { id } }', {}),
    ]:
        denied = await eve.gql.denied(mutation, variables)
        assert len(denied) == 1 and denied[0].startswith("Mutation."), denied
    assert await ids(org) == [project["id"]]
