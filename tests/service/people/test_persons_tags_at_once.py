"""getPersons asked for its people's settings reads their tags in one statement
(`remember_tags_of`), not one a person (issue #40: a reminder run's pages of 250 people read
each one's tags for their time zone and reminder settings). Each person's values are the ones
getPerson gives them alone: their own, their deepest tag's, the account's."""

from __future__ import annotations

from service.models import PersonTag
from tests.statement_counter import statements
from tests.support import Org

PEOPLE = ("query { getPersons { id name localisation { timeZone { value } } "
          "timeSettings { periodicity { value } } } }")
ONE = ("query($id: SvcId!) { getPerson(id: $id) { id name localisation { timeZone { value } } "
       "timeSettings { periodicity { value } } } }")
TAG_ZONE = ("mutation($t: SvcId!, $z: SvcTimeZone) { "
            "editTagLocalisationTimeZone(id: $t, timeZone: $z) { id } }")
TAG_PERSON = "mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p) { id } }"


def tag_reads(sql: list[str]) -> int:
    tags_table = PersonTag.__tablename__
    return sum(1 for statement in sql if f"JOIN {tags_table}" in " ".join(statement.split()))


async def test_a_page_of_people_reads_their_tags_once(org: Org) -> None:
    tokyo = (await org.admin.gql('mutation { addTag(name: "Tokyo") { id } }'))["addTag"]["id"]
    osaka = (await org.admin.gql(
        'mutation($p: SvcId!) { addTag(name: "Osaka", parentId: $p) { id } }',
        {"p": tokyo}))["addTag"]["id"]
    await org.admin.gql(TAG_ZONE, {"t": tokyo, "z": "Asia/Tokyo"})
    await org.admin.gql(TAG_ZONE, {"t": osaka, "z": "Asia/Seoul"})  # deeper: it wins
    members = [await org.add_member(f"Tia Tagged{index}") for index in range(4)]
    await org.admin.gql(TAG_PERSON, {"t": tokyo, "p": members[0].id})
    await org.admin.gql(TAG_PERSON, {"t": tokyo, "p": members[1].id})
    await org.admin.gql(TAG_PERSON, {"t": osaka, "p": members[1].id})
    await org.admin.gql(TAG_PERSON, {"t": osaka, "p": members[2].id})
    await org.admin.gql("mutation($id: SvcId!) { editPersonLocalisationTimeZone(id: $id, "
                        'timeZone: "Europe/Oslo") { id } }', {"id": members[2].id})

    service = org.live.service
    async with statements([service.engine, service.read_engine]) as seen:
        listed = (await org.admin.gql(PEOPLE))["getPersons"]
    assert tag_reads(seen.sql) == 1, seen.lines(120)
    zones = {person["id"]: person["localisation"]["timeZone"]["value"] for person in listed}
    assert [zones[member.id] for member in members] == [
        "Asia/Tokyo", "Asia/Seoul", "Europe/Oslo", zones[org.admin.id]]
    for person in listed:  # each as it reads alone
        alone = (await org.admin.gql(ONE, {"id": person["id"]}))["getPerson"]
        assert alone == person

    async with statements([service.engine, service.read_engine]) as names_only:
        await org.admin.gql("query { getPersons { id name } }")
    assert tag_reads(names_only.sql) == 0, names_only.lines(120)
