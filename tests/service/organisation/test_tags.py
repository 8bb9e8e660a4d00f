"""Tags, tag categories and tagging of people and projects through POST /graphql."""

from __future__ import annotations

from typing import Any

from plumbing.db import unit_of_work
from service.access.tag_members import person_tag_ids, tagged_person_ids
from tests.support import Org

ADD = """mutation($name: SvcName!, $categoryId: SvcId, $parentId: SvcId, $color: SvcColor) {
  addTag(name: $name, categoryId: $categoryId, parentId: $parentId, color: $color) {
    id name level color archived category { id name levelNames } parent { id name }
  }
}"""
LIST = """query($filter: [SvcTagFilter], $archived: Boolean, $categoryId: SvcId) {
  getTags(filter: $filter, archived: $archived, categoryId: $categoryId) { id }
  countTags(filter: $filter, archived: $archived, categoryId: $categoryId)
  filterTagIds(filter: $filter, archived: $archived, categoryId: $categoryId)
}"""
TAG_PERSON = """mutation($t: SvcId!, $p: SvcId!, $s: SvcTimestamp) {
  tagPerson(tagId: $t, personId: $p, startTime: $s) {
    id sourceId sourceKey targetId targetKey signature startTime { ts } } }"""
UNTAG_PERSON = """mutation($t: SvcId!, $p: SvcId!) { untagPerson(tagId: $t, personId: $p) {
  id sourceId targetId } }"""


async def add(org: Org, name: str, **variables: Any) -> dict[str, Any]:
    return (await org.admin.gql(ADD, {"name": name, **variables}))["addTag"]  # type: ignore[no-any-return]


async def ids(org: Org, **variables: Any) -> list[str]:
    data = await org.admin.gql(LIST, variables)
    assert data["countTags"] == len(data["getTags"])
    assert data["filterTagIds"] == [t["id"] for t in data["getTags"]]
    return list(data["filterTagIds"])


async def test_tags_categories_and_tree(org: Org) -> None:
    gql = org.admin.gql
    teams = (await gql('mutation { addTagCategory(name: "Teams") { id name levelNames } }'))[
        "addTagCategory"
    ]
    sites = (await gql('mutation { addTagCategory(name: "Sites") { id } }'))["addTagCategory"]
    eng = await add(org, "Engineering", categoryId=teams["id"], color="#123456")
    assert eng["level"] == 0 and eng["category"]["id"] == teams["id"] and eng["parent"] is None
    backend = await add(org, "Backend", parentId=eng["id"])
    assert backend["level"] == 1 and backend["category"]["id"] == teams["id"]
    assert backend["parent"] == {"id": eng["id"], "name": "Engineering"}
    db = await add(org, "Databases", parentId=backend["id"])
    assert db["level"] == 2
    paris = await add(org, "Paris", categoryId=sites["id"])
    message = await gql.error(ADD, {"name": "X", "parentId": eng["id"], "categoryId": sites["id"]})
    assert message.startswith('Invalid argument "categoryId"')
    message = await gql.error(ADD, {"name": "X", "parentId": "0" * 24})
    assert message.startswith('Invalid argument "parentId"')

    got = await gql(
        "query($id: SvcId!) { getTag(id: $id) { id name level category { name } parent { id } } }",
        {"id": db["id"]},
    )
    assert got["getTag"] == {"id": db["id"], "name": "Databases", "level": 2,
                             "category": {"name": "Teams"}, "parent": {"id": backend["id"]}}
    assert (await gql.error('query { getTag(id: "aaaaaaaaaaaaaaaaaaaaaaaa") { id } }')).startswith(
        'Invalid argument "id"'
    )

    # Filters.
    assert await ids(org) == [backend["id"], db["id"], eng["id"], paris["id"]]
    assert await ids(org, categoryId=sites["id"]) == [paris["id"]]
    assert await ids(org, filter=[{"categoryId": teams["id"], "level": 0}]) == [eng["id"]]
    assert await ids(org, filter=[{"name": "BACK"}]) == [backend["id"]]
    assert await ids(org, filter=[{"id": eng["id"], "following": "OR"}, {"id": paris["id"]}]) == [
        eng["id"], paris["id"]
    ]
    assert paris["id"] not in await ids(org, filter=[{"notId": paris["id"]}])
    message = await gql.error(LIST, {"filter": [{"following": "AND"}]})
    assert message.startswith('Invalid argument "filter[0]"')

    # Move, edit.
    parent = "mutation($id: SvcId!, $p: SvcId) { editTagParent(id: $id, parentId: $p) { level } }"
    assert (await gql(parent, {"id": backend["id"], "p": None}))["editTagParent"]["level"] == 0
    assert await ids(org, filter=[{"level": 1}]) == [db["id"]]
    message = await gql.error(parent, {"id": backend["id"], "p": db["id"]})
    assert message.startswith('Invalid argument "parentId"')
    message = await gql.error(parent, {"id": backend["id"], "p": paris["id"]})
    assert message.startswith('Invalid argument "parentId"')
    await gql(parent, {"id": backend["id"], "p": eng["id"]})
    assert await ids(org, filter=[{"level": 2}]) == [db["id"]]
    data = await gql(
        'mutation($id: SvcId!) { editTagName(id: $id, name: "Eng") { name }'
        ' editTagColor(id: $id, color: "red") { color } }',
        {"id": eng["id"]},
    )
    assert data == {"editTagName": {"name": "Eng"}, "editTagColor": {"color": "red"}}

    # Categories.
    data = await gql(
        "mutation($id: SvcId!) {"
        '  editTagCategoryName(id: $id, name: "Groups") { name }'
        '  editTagCategoryLevelNames(id: $id, levelNames: ["Division", "Team"]) { levelNames } }',
        {"id": teams["id"]},
    )
    assert data["editTagCategoryName"]["name"] == "Groups"
    assert data["editTagCategoryLevelNames"]["levelNames"] == ["Division", "Team"]
    categories = (await gql("{ getTagCategories { name } }"))["getTagCategories"]
    assert [c["name"] for c in categories] == ["Groups", "Sites"]
    message = await gql.error(
        "mutation($id: SvcId!) { deleteTagCategory(id: $id) { id } }", {"id": sites["id"]}
    )
    assert "Sites" in message and "1 tag" in message
    spare = (await gql('mutation { addTagCategory(name: "Spare") { id } }'))["addTagCategory"]
    data = await gql(
        "mutation($id: SvcId!) { deleteTagCategory(id: $id) { name } }", {"id": spare["id"]}
    )
    assert data["deleteTagCategory"]["name"] == "Spare"


async def test_default_category(org: Org) -> None:
    tag = await add(org, "Loose")
    assert tag["category"] == {"id": tag["category"]["id"], "name": "Tags", "levelNames": []}


async def test_archive_and_delete(org: Org) -> None:
    gql = org.admin.gql
    root = await add(org, "Root")
    child = await add(org, "Child", parentId=root["id"])
    other = await add(org, "Other")
    data = await gql("mutation($id: SvcId!) { archiveTag(id: $id) { id archived } }",
                     {"id": root["id"]})
    assert {t["id"] for t in data["archiveTag"]} == {root["id"], child["id"]}
    assert await ids(org) == [other["id"]]
    assert len(await ids(org, archived=True)) == 3
    assert set(await ids(org, filter=[{"archived": True}])) == {root["id"], child["id"]}
    data = await gql("mutation($id: SvcId!) { unarchiveTag(id: $id) { id archived } }",
                     {"id": root["id"]})
    assert data["unarchiveTag"] == {"id": root["id"], "archived": False}
    data = await gql("mutation($ids: [SvcId]!) { unarchiveTags(ids: $ids) { id } }",
                     {"ids": [child["id"]]})
    assert len(data["unarchiveTags"]) == 1
    data = await gql("mutation($ids: [SvcId]!) { archiveTags(ids: $ids) { id } }",
                     {"ids": [other["id"]]})
    assert [t["id"] for t in data["archiveTags"]] == [other["id"]]

    delete = "mutation($id: SvcId!, $check: Boolean) { deleteTag(id: $id, check: $check) { id name } }"  # noqa: E501
    assert "subtag" in await gql.error(delete, {"id": root["id"], "check": True})
    assert "subtag" in await gql.error(delete, {"id": root["id"]})
    data = await gql(delete, {"id": child["id"], "check": True})
    assert data["deleteTag"]["name"] == "Child"
    assert child["id"] in await ids(org)
    message = await gql.error("mutation($ids: [SvcId]!) { deleteTags(ids: $ids) { id } }",
                              {"ids": [child["id"], "9" * 24]})
    assert message.startswith('Invalid argument "ids[1]"')
    data = await gql("mutation($ids: [SvcId]!) { deleteTags(ids: $ids) { id } }",
                     {"ids": [root["id"], child["id"]]})
    assert len(data["deleteTags"]) == 2
    assert await ids(org) == []
    await gql(delete, {"id": other["id"]})
    assert await ids(org, archived=True) == []


async def test_tagging_people_and_projects(org: Org) -> None:
    gql = org.admin.gql
    eng = await add(org, "Engineering")
    backend = await add(org, "Backend", parentId=eng["id"])
    bob = await org.add_member("Bob")
    start = 1_767_225_600_000

    relation = (await gql(TAG_PERSON, {"t": backend["id"], "p": bob.id, "s": start}))["tagPerson"]
    assert relation["sourceId"] == backend["id"] and relation["targetId"] == bob.id
    assert relation["startTime"] == {"ts": start}
    assert relation["sourceKey"] and relation["targetKey"] and relation["signature"]
    again = (await gql(TAG_PERSON, {"t": backend["id"], "p": bob.id}))["tagPerson"]
    assert again["id"] == relation["id"] and again["startTime"] is None
    assert await ids(org, filter=[{"taggedPersonId": bob.id}]) == [backend["id"]]
    async with unit_of_work(org.live.service.sessions) as session:
        assert await tagged_person_ids(session, org.id, [eng["id"]]) == {bob.id}
        assert await person_tag_ids(session, org.id, bob.id) == {eng["id"], backend["id"]}

    message = await gql.error(TAG_PERSON, {"t": backend["id"], "p": "3" * 24})
    assert message.startswith('Invalid argument "personId"')
    message = await gql.error(TAG_PERSON, {"t": "3" * 24, "p": bob.id})
    assert message.startswith('Invalid argument "tagId"')
    message = await gql.error(UNTAG_PERSON, {"t": eng["id"], "p": bob.id})
    assert message.startswith('Invalid argument "personId"')
    removed = (await gql(UNTAG_PERSON, {"t": backend["id"], "p": bob.id}))["untagPerson"]
    assert removed["id"] == relation["id"]
    assert await ids(org, filter=[{"taggedPersonId": bob.id}]) == []

    await gql(TAG_PERSON, {"t": eng["id"], "p": bob.id})
    data = await gql("mutation($t: SvcId!) { resetTaggedPersons(tagId: $t) { id } }",
                     {"t": eng["id"]})
    assert data["resetTaggedPersons"]["id"] == eng["id"]
    assert await ids(org, filter=[{"taggedPersonId": bob.id}]) == []

    project = (await gql('mutation { addProject(name: "P") { id } }'))["addProject"]
    tag_project = "mutation($t: SvcId!, $p: SvcId!) { tagProject(tagId: $t, projectId: $p) { id targetId } }"  # noqa: E501
    untag_project = "mutation($t: SvcId!, $p: SvcId!) { untagProject(tagId: $t, projectId: $p) { id } }"  # noqa: E501
    data = await gql(tag_project, {"t": eng["id"], "p": project["id"]})
    assert data["tagProject"]["targetId"] == project["id"]
    assert await ids(org, filter=[{"taggedProjectId": project["id"]}]) == [eng["id"]]
    message = await gql.error(untag_project, {"t": backend["id"], "p": project["id"]})
    assert message.startswith('Invalid argument "projectId"')
    message = await gql.error(tag_project, {"t": eng["id"], "p": "4" * 24})
    assert message.startswith('Invalid argument "projectId"')
    await gql(untag_project, {"t": eng["id"], "p": project["id"]})
    await gql(tag_project, {"t": backend["id"], "p": project["id"]})
    await gql("mutation($t: SvcId!) { resetTaggedProjects(tagId: $t) { id } }",
              {"t": backend["id"]})
    assert await ids(org, filter=[{"taggedProjectId": project["id"]}]) == []

    # An archived tag cannot be put on anyone.
    await gql("mutation($id: SvcId!) { archiveTag(id: $id) { id } }", {"id": eng["id"]})
    message = await gql.error(TAG_PERSON, {"t": eng["id"], "p": bob.id})
    assert message.startswith('Invalid argument "tagId"')


async def test_employees_read_but_do_not_edit(org: Org) -> None:
    tag = await add(org, "Visible")
    eve = await org.add_member("Eve")
    data = await eve.gql(LIST, {})
    assert [t["id"] for t in data["getTags"]] == [tag["id"]]
    assert (await eve.gql("{ getTagCategories { id } }"))["getTagCategories"]
    for mutation, variables in [
        (ADD, {"name": "Nope"}),
        ('mutation($id: SvcId!) { editTagName(id: $id, name: "N") { id } }', {"id": tag["id"]}),
        ("mutation($id: SvcId!) { deleteTag(id: $id) { id } }", {"id": tag["id"]}),
        ("mutation($id: SvcId!) { archiveTag(id: $id) { id } }", {"id": tag["id"]}),
        (TAG_PERSON, {"t": tag["id"], "p": eve.id}),
        ('mutation { addTagCategory(name: "N") { id } }', {}),
    ]:
        denied = await eve.gql.denied(mutation, variables)
        assert len(denied) == 1 and denied[0].startswith("Mutation."), denied
    assert await ids(org, filter=[{"taggedPersonId": eve.id}]) == []
