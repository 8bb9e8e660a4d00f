"""Hostile input to the legacy interface (/api/v2) over real HTTP: never a 500, an error
naming the member, and nothing written."""

from __future__ import annotations

import json

import httpx
import pytest

from service.graphql.limits import MAX_STRING_LENGTH
from tests.service.test_legacy import Legacy, legacy_for
from tests.support import Org

ENTRY = {"start": "2026-03-02 10:00:00", "duration": 3600}


async def send(legacy: Legacy, body: str) -> httpx.Response:
    response = await legacy.raw(content=body.encode("utf-8", "surrogatepass"))
    assert response.status_code != 500, response.text
    return response


def refused(response: httpx.Response) -> str:
    body = response.json()
    assert body["status"] == "error", body
    assert "Internal server error" not in body["message"]
    return str(body["message"])


async def entries(org: Org) -> int:
    return int((await org.admin.gql("{ countTimeRecords }"))["countTimeRecords"])


CASES = {
    "deep JSON": ('{"service": "company.list", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
                  "nests deeper"),
    "nested member": ('{"service": "company.list", "x": ' + "[" * 40 + "]" * 40 + "}",
                      "x[0]"),
    "NUL comment": (json.dumps({"service": "time_entry.create",
                                "time_entry": {**ENTRY, "comment": "a\x00b"}}),
                    "time_entry.comment contains a NUL character"),
    "long comment": (json.dumps({"service": "time_entry.create", "time_entry": {
        **ENTRY, "comment": "x" * (MAX_STRING_LENGTH + 1)}}),
                     "time_entry.comment is longer than"),
    "surrogate": ('{"service": "time_entry.create", "time_entry": {"start":'
                  ' "2026-03-02 10:00:00", "duration": 3600, "comment": "a\\ud800"}}',
                  "time_entry.comment contains a lone surrogate"),
    "huge duration": (json.dumps({"service": "time_entry.create",
                                  "time_entry": {**ENTRY, "duration": 1e300}}),
                      "time_entry.duration is out of range"),
    "infinite duration": ('{"service": "time_entry.create", "time_entry": {"start":'
                          ' "2026-03-02 10:00:00", "duration": Infinity}}', "Infinity"),
    "5000 digits": ('{"service": "time_entry.create", "time_entry": {"start":'
                    ' "2026-03-02 10:00:00", "duration": ' + "9" * 5000 + "}}",
                    "not a valid JSON document"),
    "year 1": (json.dumps({"service": "time_entry.create",
                           "time_entry": {"start": "0001-01-01 00:00:00", "duration": 60}}),
               "time_entry.start must lie between 1900 and 2999"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_hostile_legacy_input(org: Org, case: str) -> None:
    legacy = await legacy_for(org, org.admin)
    body, expected = CASES[case]
    before = await entries(org)
    message = refused(await send(legacy, body))
    assert expected in message, message
    assert await entries(org) == before
