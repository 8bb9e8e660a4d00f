"""A refused field is omitted from `data` and its path listed in `permissionsErrors`; the
request does not fail as a whole: its siblings (queries or mutations) keep their results,
whatever the refused field's nullability and depth."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from service.errors import PermissionDenied
from service.graphql import execution
from service.graphql.execution import _labelling_resolver
from service.graphql.refusals import omitting_refusals
from tests.service.test_approvals_support import WEEK, add_record
from tests.support import HOUR_MS, LiveServer, Org

COMMENT = (
    "mutation($id: SvcId!, $c: String!) { editTimeRecordComment(id: $id, comment: $c) { id } }"
)


async def test_refused_non_null_query_field_keeps_its_siblings(org: Org) -> None:
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    theirs = await add_record(eve, eve)
    mine = await add_record(bob, bob)
    body = await bob.gql.body(
        "query($t: SvcId!, $m: SvcId!) { currentPerson { id name }"
        " getTimeRecord(id: $t) { id } own: getTimeRecord(id: $m) { id } }",
        {"t": theirs, "m": mine},
    )
    assert body["data"] == {"currentPerson": {"id": bob.id, "name": "Bob"},
                            "own": {"id": mine}}
    assert body["permissionsErrors"] == ["Query.getTimeRecord"]
    assert "errors" not in body


async def test_refused_field_alone_gives_empty_data(org: Org) -> None:
    bob = await org.add_member("Bob")
    theirs = await add_record(org.admin, org.admin)
    body = await bob.gql.body("query($t: SvcId!) { getTimeRecord(id: $t) { id } }", {"t": theirs})
    assert body == {"data": {}, "permissionsErrors": ["Query.getTimeRecord"]}


async def test_refused_mutation_among_others_keeps_their_results(org: Org) -> None:
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    mine = await add_record(bob, bob)
    theirs = await add_record(eve, eve)
    body = await bob.gql.body(
        "mutation($m: SvcId!, $t: SvcId!, $s: SvcTimestamp!, $p: SvcId!, $e: SvcId!) {"
        " first: editTimeRecordComment(id: $m, comment: \"one\") { id comment }"
        " refused: editTimeRecordComment(id: $t, comment: \"forged\") { id comment }"
        " added: addTimeRecord(startTime: $s, duration: 3600000, personId: $p) { id }"
        " addTimeRecord(startTime: $s, duration: 3600000, personId: $e) { id } }",
        {"m": mine, "t": theirs, "s": WEEK + 30 * HOUR_MS, "p": bob.id, "e": eve.id},
    )
    data = body["data"]
    assert set(data) == {"first", "added"}, body
    assert data["first"] == {"id": mine, "comment": "one"}
    assert body["permissionsErrors"] == [
        "Mutation.editTimeRecordComment", "Mutation.addTimeRecord"]
    assert "errors" not in body
    # The allowed mutations were written; the refused ones wrote nothing.
    records = await org.admin.gql("{ getTimeRecords { id comment person { id } } }")
    by_id = {record["id"]: record for record in records["getTimeRecords"]}
    assert by_id[mine]["comment"] == "one"
    assert by_id[theirs]["comment"] == ""
    assert data["added"]["id"] in by_id
    assert [r["person"]["id"] for r in by_id.values()].count(eve.id) == 1


async def test_refused_mutation_alone_and_in_pairs(org: Org) -> None:
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    theirs = await add_record(eve, eve)
    assert await bob.gql.denied(COMMENT, {"id": theirs, "c": "x"}) == [
        "Mutation.editTimeRecordComment"]
    body = await bob.gql.body(
        "mutation($t: SvcId!) { a: editTimeRecordComment(id: $t, comment: \"x\") { id }"
        " b: editTimeRecordComment(id: $t, comment: \"y\") { id } }", {"t": theirs})
    assert body == {"data": {}, "permissionsErrors": ["Mutation.editTimeRecordComment"]}


async def test_refused_nested_fields_are_omitted_from_their_object(org: Org) -> None:
    """Refusals below the root: each refused field leaves its object, nothing else."""
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    body = await bob.gql.body(
        "query($e: SvcId!) { currentPerson { id approvalStages { value { type } } }"
        " getPerson(id: $e) { id name approvalStages { value { type } }"
        " timeSettings { ownerOrAdminOnly { value } } }"
        " currentOrganisation { id integrations { webhooks { id } } } }",
        {"e": eve.id},
    )
    data = body["data"]
    assert data["getPerson"] == {"id": eve.id, "name": "Eve",
                                 "timeSettings": {"ownerOrAdminOnly": {"value": None}}}
    assert data["currentOrganisation"] == {"id": org.id, "integrations": {}}
    assert data["currentPerson"]["id"] == bob.id and "approvalStages" in data["currentPerson"]
    assert sorted(body["permissionsErrors"]) == [
        "SvcIntegrations.webhooks", "SvcPerson.approvalStages"]


@contextmanager
def refusing_localisation(live: LiveServer) -> Iterator[None]:
    """No field of the schema that can refuse is non-null below the root today; for the
    while, SvcPerson.localisation (SvcLocalisation!) refuses everyone but admins, wrapped
    with its permission label as at schema build."""
    field = live.service.schema.type_map["SvcPerson"].fields["localisation"]  # type: ignore[union-attr]
    original = field.resolve

    def resolve(person: Any, info: Any) -> Any:
        if not info.context.is_admin:
            raise PermissionDenied("only administrators see localisations")
        return original(person, info) if original is not None else None

    field.resolve = _labelling_resolver(resolve, "SvcPerson.localisation")
    try:
        yield
    finally:
        field.resolve = original


async def test_refused_nested_non_null_field_omits_only_that_field(org: Org) -> None:
    bob = await org.add_member("Bob")
    query = (
        "{ currentPerson { id localisation { timeZone { value } } }"
        " getPersons { id name localisation { currency { value } } } }"
    )
    with refusing_localisation(org.live):
        body = await bob.gql.body(query)
        admin_body = await org.admin.gql.body(query)
    assert body["data"]["currentPerson"] == {"id": bob.id}
    people = body["data"]["getPersons"]
    assert {person["id"] for person in people} == {bob.id, org.admin.id}
    assert all(set(person) == {"id", "name"} for person in people), people
    assert body["permissionsErrors"] == ["SvcPerson.localisation"]
    assert "errors" not in body
    assert "localisation" in admin_body["data"]["currentPerson"]
    assert "permissionsErrors" not in admin_body


async def test_graphql_cores_own_executor_omits_refusals_too(
    org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the quicker executor (another graphql-core version), the same omission."""
    monkeypatch.setattr(execution, "_EXECUTOR_CLASS", omitting_refusals(None))
    bob = await org.add_member("Bob")
    theirs = await add_record(org.admin, org.admin)
    with refusing_localisation(org.live):
        body = await bob.gql.body(
            "query($t: SvcId!) { currentPerson { id localisation { timeZone { value } } }"
            " getTimeRecord(id: $t) { id } }", {"t": theirs})
    assert body["data"] == {"currentPerson": {"id": bob.id}}
    assert sorted(body["permissionsErrors"]) == ["Query.getTimeRecord", "SvcPerson.localisation"]
    assert "errors" not in body
