"""Hostile input over real HTTP: every request is answered (never a 500), with an error that
names the argument or the limit, and nothing is written."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from service.graphql.limits import MAX_BODY_BYTES, MAX_STRING_LENGTH
from tests.support import Org

ADD = (
    "mutation($startTime: SvcTimestamp!, $p: SvcId!) {"
    " addTimeRecord(startTime: $startTime, duration: 60, personId: $p) { id } }"
)
COMMENT = "mutation($id: SvcId!, $comment: String!) { editTimeRecordComment(id: $id, comment: $comment) { id } }"  # noqa: E501
WRITES = "{ countTimeRecords getAuditTrails { operationName } }"


async def post(org: Org, body: bytes | str, apikey: str | None = None) -> httpx.Response:
    content = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    response = await org.http.post(
        org.live.graphql_url,
        content=content,
        headers={
            "content-type": "application/json",
            "apikey": org.admin.apikey if apikey is None else apikey,
        },
    )
    assert response.status_code != 500, response.text
    return response


def message(response: httpx.Response) -> str:
    body = response.json()
    assert body.get("errors"), body
    text = str(body["errors"][0]["message"])
    assert "Internal server error" not in text
    return text


async def writes(org: Org) -> tuple[int, int]:
    data = await org.admin.gql(WRITES)
    return data["countTimeRecords"], len(data["getAuditTrails"])


async def test_unauthenticated_document_is_refused_unparsed(org: Org) -> None:
    documents = org.live.service.executor.documents
    before, cached = documents.prepared, len(documents)
    huge = "{ " + " ".join(f"a{i}: currentPerson {{ id }}" for i in range(20_000)) + " }"
    for apikey in ("not-a-key", ""):
        response = await post(org, json.dumps({"query": huge}), apikey)
        assert response.json() == {"data": None, "errors": [{"message": "APIKeyError:InvalidKey"}]}
    assert (documents.prepared, len(documents)) == (before, cached)
    # With a valid key the same document is parsed, and refused by a limit.
    response = await post(org, json.dumps({"query": huge}))
    assert "maxTokens" in message(response)
    assert documents.prepared == before + 1


async def test_body_over_the_limit_is_413(org: Org) -> None:
    comment = "x" * MAX_BODY_BYTES
    body = json.dumps({"query": COMMENT, "variables": {"id": "0" * 24, "comment": comment}})
    response = await post(org, body)
    assert response.status_code == 413
    assert "maxBodyBytes" in message(response)


def _with_filter(query: str, filter_json: str) -> str:
    return '{"query": ' + json.dumps(query) + ', "variables": {"f": ' + filter_json + "}}"


async def test_deeply_nested_json_variables(org: Org) -> None:
    before = await writes(org)
    query = "query($f: [SvcTimeRecordFilter]) { getTimeRecords(filter: $f) { id } }"
    deep = _with_filter(query, "[" * 100_000 + "]" * 100_000)
    response = await post(org, deep)
    assert response.status_code == 400
    assert "nests too deeply" in message(response)
    # Deep enough to pass the JSON decoder, too deep for an argument.
    nested = _with_filter(query, "[" * 500 + "]" * 500)
    text = message(await post(org, nested))
    assert 'Invalid argument "filter"' in text and "maxInputDepth" in text
    literal = "{ getTimeRecords(filter: " + "[" * 40 + "]" * 40 + ") { id } }"
    text = message(await post(org, json.dumps({"query": literal})))
    assert 'Invalid argument "filter"' in text and "maxInputDepth" in text
    literal = "{ getTimeRecords(filter: " + "[" * 5000 + "]" * 5000 + ") { id } }"
    assert "nested too deeply" in message(await post(org, json.dumps({"query": literal})))
    assert await writes(org) == before


async def test_a_thousand_mutations_in_one_request(org: Org) -> None:
    before = await writes(org)
    names = " ".join(
        f'm{i}: editOrganisationName(name: "Org {i}") {{ id }}' for i in range(1000)
    )
    text = message(await post(org, json.dumps({"query": "mutation { " + names + " }"})))
    assert "maxMutations" in text
    assert await writes(org) == before
    assert (await org.admin.gql("{ currentOrganisation { name } }"))[
        "currentOrganisation"]["name"].startswith("Acme")


def _nested(field: str, levels: int, leaf: str = "name") -> str:
    return "".join(f"{field} {{ " for _ in range(levels)) + leaf + " }" * levels


LIMIT_CASES = {
    "depth": ("maxDepth", "{ __schema { types { " + _nested("ofType", 45) + " } } }"),
    "fields": ("maxFields", "{ " + " ".join("__typename" for _ in range(3_001)) + " }"),
    "aliases": ("maxAliases", "{ " + " ".join(f"a{i}: __typename" for i in range(1_001)) + " }"),
    "cost": ("maxCost", "{ __schema { types { " + _nested("interfaces", 5) + " } } }"),
    "tokens": ("maxTokens", "{ " + " ".join("__typename" for _ in range(16_000)) + " }"),
    # fragments that double at every level: a billion fields once expanded
    "fragment bomb": ("maxFields", "query { ...F0 } " + " ".join(
        f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}" for i in range(30)
    ) + " fragment F30 on Query { __typename }"),
    # a fragment cycle stops at a limit too (validation would report it)
    "fragment cycle": (
        "maxFields", "query { currentPerson { ...P } } fragment P on SvcPerson { id ...P }"
    ),
}


@pytest.mark.parametrize("case", list(LIMIT_CASES))
async def test_document_limits(org: Org, case: str) -> None:
    limit, query = LIMIT_CASES[case]
    response = await post(org, json.dumps({"query": query}))
    assert response.status_code == 200
    assert limit in message(response)


async def test_what_the_ide_sends_is_within_the_limits(org: Org) -> None:
    from graphql import get_introspection_query

    query = get_introspection_query(
        descriptions=True, specified_by_url=True, directive_is_repeatable=True,
        schema_description=True, input_value_deprecation=True,
    )
    body = await org.admin.gql.body(query)
    assert "errors" not in body and body["data"]["__schema"]["types"]


@pytest.mark.parametrize("value", [1e20, 2**63, -1e15, "99999999999999999999999"])
async def test_timestamps_out_of_range(org: Org, value: Any) -> None:
    before = await writes(org)
    body = json.dumps({"query": ADD, "variables": {"startTime": value, "p": org.admin.id}})
    text = message(await post(org, body))
    assert "$startTime" in text and "3000-01-01" in text
    literal = (
        f"mutation {{ addTimeRecord(startTime: {int(value)}, duration: 60,"
        f' personId: "{org.admin.id}") {{ id }} }}'
    )
    text = message(await post(org, json.dumps({"query": literal})))
    assert "SvcTimestamp" in text and "3000-01-01" in text
    assert await writes(org) == before


async def _record(org: Org) -> str:
    data = await org.admin.gql(ADD, {"startTime": 0, "p": org.admin.id})
    return str(data["addTimeRecord"]["id"])


@pytest.mark.parametrize(
    ("comment", "problem"),
    [
        ("before\x00after", "NUL"),
        ("x" * (MAX_STRING_LENGTH + 1), "maxStringLength"),
        ("a\ud800b", "surrogate"),
    ],
)
async def test_bad_strings_name_the_argument(org: Org, comment: str, problem: str) -> None:
    record = await _record(org)
    before = await writes(org)
    body = json.dumps({"query": COMMENT, "variables": {"id": record, "comment": comment}})
    text = message(await post(org, body))
    assert 'Invalid argument "comment"' in text and problem in text
    # The same as a literal in the document ("\u0000" escapes, a surrogate's escape).
    escaped = json.dumps(comment)
    literal = f'mutation {{ editTimeRecordComment(id: "{record}", comment: {escaped}) {{ id }} }}'
    text = message(await post(org, json.dumps({"query": literal})))
    assert ('Invalid argument "comment"' in text and problem in text) or "Syntax Error" in text
    assert await writes(org) == before
    data = await org.admin.gql("query($id: SvcId!) { getTimeRecord(id: $id) { comment } }",
                               {"id": record})
    assert not data["getTimeRecord"]["comment"]


async def test_raw_surrogate_and_huge_numbers_are_answered(org: Org) -> None:
    # A lone surrogate in the document itself: graphql-core's syntax error quotes it.
    response = await post(org, '{"query": "{ currentPerson(x: \\"\\ud800\\") { id } }"}')
    assert "Syntax Error" in message(response)
    # A number of 5,000 digits: Python's int conversion refuses it.
    body = '{"query": "{ currentPerson { id } }", "variables": {"x": ' + "9" * 5000 + "}}"
    response = await post(org, body)
    assert response.status_code == 400 and "not valid JSON" in message(response)
