"""Archived people keep no powers: their GraphQL key answers as an unknown key does
(`APIKeyError:InvalidKey`) and their legacy token as an unknown token; unarchived, both answer
again. timebot's own integration person is archived on purpose, and its key answers."""

from __future__ import annotations

import base64

from tests.support import Member, Org

ARCHIVE = "mutation($id: SvcId!) { archivePerson(id: $id) { archived } }"
UNARCHIVE = "mutation($id: SvcId!) { unarchivePerson(id: $id) { archived } }"


def basic(token: str) -> str:
    return "Basic " + base64.b64encode(f"{token}:x".encode()).decode()


async def legacy_list(org: Org, token: str) -> tuple[int, dict[str, object]]:
    response = await org.http.post(
        f"{org.live.base_url}/api/v2", json={"service": "person.list"},
        headers={"Authorization": basic(token)},
    )
    return response.status_code, response.json()


async def answers(org: Org, member: Member, token: str) -> bool:
    status, body = await legacy_list(org, token)
    data = await member.gql("{ currentPerson { id } }")
    return status == 200 and body["status"] == "ok" and data["currentPerson"]["id"] == member.id


async def test_an_archived_persons_key_and_legacy_token_are_refused(org: Org) -> None:
    bob = await org.add_member("Bob Archived", "admin")
    token = (await bob.gql("mutation { issueLegacyToken }"))["issueLegacyToken"]
    assert await answers(org, bob, token)

    await org.admin.gql(ARCHIVE, {"id": bob.id})
    unknown = await org.gql_for("no-such-key-0123456789").error("{ currentPerson { id } }")
    assert unknown == "APIKeyError:InvalidKey"
    for document in ("{ currentPerson { id } }",
                     'mutation { addProject(name: "written by an archived admin") { id } }'):
        assert await bob.gql.error(document) == unknown
    status, body = await legacy_list(org, token)
    assert (status, body) == (401, {"status": "error", "message": "Invalid token"})
    projects = await org.admin.gql("{ getProjects { name } }")
    assert projects["getProjects"] == [], "nothing was written with the archived person's key"

    await org.admin.gql(UNARCHIVE, {"id": bob.id})
    assert await answers(org, bob, token)


async def test_the_integration_person_is_archived_and_its_key_answers(org: Org) -> None:
    provisioner = org.live.app.state.runtime.directory.provisioner
    key = await provisioner.integration_key(org.id)
    body = await org.gql_for(key).body("{ currentPerson { archived } getPersons { id } }")
    assert not body.get("errors"), body
    assert body["data"]["currentPerson"]["archived"] is True
