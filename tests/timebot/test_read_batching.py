"""Read queries merged into one request (timebot.read_batching): each caller gets exactly what
it would have had alone — data, its own errors — and what cannot be attributed runs alone."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from tests.service.test_approvals_support import add_record, submit
from tests.support import Org
from timebot.client import ServiceClient
from timebot.errors import InvalidCredentials, PermissionRefused, ServiceRequestError
from timebot.read_batching import ReadBatcher, merge

PERSON = "query Who($id: SvcId!) { getPerson(id: $id) { id name email } }"
PERSON_AND_ME = (
    "query Both($id: SvcId!) { p: getPerson(id: $id) { name } currentPerson { id } }"
)
ORG = "query { currentOrganisation { id name } }"
EVENT = "query Ev($id: SvcId!) { getApprovalEventById(id: $id) { id } }"
SSO_SETTINGS = "query { currentOrganisation { id sso { google { ssoOnly } } } }"


def test_merge_renames_variables_and_aliases_root_fields() -> None:
    merged = merge([PERSON, PERSON_AND_ME], [{"id": "a" * 24}, {"id": "b" * 24}])
    assert merged is not None
    source, variables, aliases = merged
    assert variables == {"b0_id": "a" * 24, "b1_id": "b" * 24}
    assert aliases == [{"b0_getPerson": "getPerson"},
                       {"b1_p": "p", "b1_currentPerson": "currentPerson"}]
    assert "$b0_id: SvcId!" in source and "b1_p: getPerson(id: $b1_id)" in source


def test_mutations_and_fragments_are_never_merged() -> None:
    mutation = "mutation { addTag(name: \"x\") { id } }"
    fragment = "query { currentPerson { ...F } } fragment F on SvcPerson { id }"
    assert merge([PERSON, mutation], [{"id": "a" * 24}, {}]) is None
    assert merge([PERSON, fragment], [{"id": "a" * 24}, {}]) is None


def _client(org: Org) -> ServiceClient:
    return ServiceClient(org.live.graphql_url)


async def test_concurrent_reads_share_one_request_and_each_gets_its_own_answer(org: Org) -> None:
    members = [await org.add_member(f"Reader {index}") for index in range(4)]
    client = _client(org)
    batcher = ReadBatcher(client, window_s=0.05)
    try:
        results = await asyncio.gather(
            *(batcher.execute(PERSON, {"id": m.id}, apikey=org.admin.apikey) for m in members),
            batcher.execute(PERSON_AND_ME, {"id": members[0].id}, apikey=org.admin.apikey),
            batcher.execute(ORG, apikey=org.admin.apikey),
        )
        alone = [await client.execute(PERSON, {"id": m.id}, apikey=org.admin.apikey)
                 for m in members]
        assert list(results[:4]) == alone
        assert results[4] == {"p": {"name": members[0].name},
                              "currentPerson": {"id": org.admin.id}}
        assert results[5]["currentOrganisation"]["id"] == org.id
        # The four copies of one query in one request; each other query in its own (a
        # merged shape per query and count, not per mix: timebot.read_batching).
        assert batcher.requests_sent == 3
    finally:
        await client.close()


async def test_an_error_reaches_only_the_query_that_caused_it(org: Org) -> None:
    member = await org.add_member("Erin Error")
    await add_record(member, member)
    event_id = (await submit(member, member))["id"]
    client = _client(org)
    batcher = ReadBatcher(client, window_s=0.05)
    unknown = uuid.uuid4().hex[:24]
    try:
        with pytest.raises(ServiceRequestError) as alone:
            await client.execute(EVENT, {"id": unknown}, apikey=org.admin.apikey)
        good, bad = await asyncio.gather(
            batcher.execute(EVENT, {"id": event_id}, apikey=org.admin.apikey),
            batcher.execute(EVENT, {"id": unknown}, apikey=org.admin.apikey),
            return_exceptions=True,
        )
        assert good == {"getApprovalEventById": {"id": event_id}}
        assert isinstance(bad, ServiceRequestError)
        assert bad.messages == alone.value.messages
        assert batcher.requests_sent == 1
        # An error in a non-null root field nulls the whole merged answer: each runs alone.
        with pytest.raises(ServiceRequestError) as alone:
            await client.execute(PERSON, {"id": unknown}, apikey=org.admin.apikey)
        good, bad = await asyncio.gather(
            batcher.execute(PERSON, {"id": member.id}, apikey=org.admin.apikey),
            batcher.execute(PERSON, {"id": unknown}, apikey=org.admin.apikey),
            return_exceptions=True,
        )
        assert good == {"getPerson": {"id": member.id, "name": member.name,
                                      "email": member.email}}
        assert isinstance(bad, ServiceRequestError)
        assert bad.messages == alone.value.messages
        assert batcher.requests_sent == 1 + 3
    finally:
        await client.close()


async def test_what_cannot_be_attributed_runs_each_query_alone(org: Org) -> None:
    member = await org.add_member("Fay Fallback")
    employee = await org.add_member("Pat Peer")
    client = _client(org)
    batcher = ReadBatcher(client, window_s=0.05)
    try:
        # A variable of the wrong type fails the whole merged request without a path.
        good, bad = await asyncio.gather(
            batcher.execute(PERSON, {"id": member.id}, apikey=org.admin.apikey),
            batcher.execute(PERSON, {"id": 12}, apikey=org.admin.apikey),
            return_exceptions=True,
        )
        assert good["getPerson"]["id"] == member.id  # type: ignore[index]
        assert isinstance(bad, ServiceRequestError)
        assert batcher.requests_sent == 3
        # A refused field (permissionsErrors name the field, not our alias), as an employee.
        sent = batcher.requests_sent
        with pytest.raises(PermissionRefused) as refused_alone:
            await client.execute(SSO_SETTINGS, apikey=employee.apikey)
        mine, theirs = await asyncio.gather(
            batcher.execute(PERSON, {"id": employee.id}, apikey=employee.apikey),
            batcher.execute(SSO_SETTINGS, apikey=employee.apikey),
            return_exceptions=True,
        )
        assert mine == {"getPerson": {"id": employee.id, "name": employee.name,
                                      "email": employee.email}}
        assert isinstance(theirs, PermissionRefused)
        assert theirs.paths == refused_alone.value.paths
        assert batcher.requests_sent == sent + 2
        # A refused key: every query of the batch hears it.
        first, second = await asyncio.gather(
            batcher.execute(ORG, apikey="not-a-key"),
            batcher.execute(PERSON, {"id": member.id}, apikey="not-a-key"),
            return_exceptions=True,
        )
        assert isinstance(first, InvalidCredentials) and isinstance(second, InvalidCredentials)
    finally:
        await client.close()


async def test_different_keys_are_never_merged(org: Org) -> None:
    member = await org.add_member("Kim Key")
    client = _client(org)
    batcher = ReadBatcher(client, window_s=0.05)
    try:
        admin_view, own_view = await asyncio.gather(
            batcher.execute(ORG, apikey=org.admin.apikey),
            batcher.execute("query { currentPerson { id } }", apikey=member.apikey),
        )
        assert admin_view["currentOrganisation"]["id"] == org.id
        assert own_view == {"currentPerson": {"id": member.id}}
        assert batcher.requests_sent == 2
    finally:
        await client.close()


async def test_in_process_each_query_runs_on_its_own_and_no_merged_document_is_prepared(
    org: Org,
) -> None:
    """A server with its service embedded calls its executor directly: merging would save no
    HTTP request, and each count of copies would be a new document to parse and validate."""
    members = [await org.add_member(f"Direct {index}") for index in range(5)]
    client: ServiceClient = org.live.app.state.runtime.client
    assert client.in_process
    documents = client._direct.executor.documents  # type: ignore[union-attr]
    batcher = ReadBatcher(client, window_s=0.05)
    alone = [await client.execute(PERSON, {"id": m.id}, apikey=org.admin.apikey)
             for m in members]
    prepared = documents.prepared
    results = await asyncio.gather(
        *(batcher.execute(PERSON, {"id": m.id}, apikey=org.admin.apikey) for m in members))
    assert list(results) == alone
    assert batcher.requests_sent == len(members)
    assert documents.prepared == prepared  # the query's own document, prepared before
    with pytest.raises(ServiceRequestError):  # its own error, as alone
        await batcher.execute(PERSON, {"id": 12}, apikey=org.admin.apikey)
