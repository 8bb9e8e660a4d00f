"""Hostile input to the legacy interface (/api/v2) over real HTTP: never a 500, an error
naming the member, and nothing written."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from service.graphql.limits import MAX_STRING_LENGTH
from tests.service.legacy.test_legacy import Legacy, legacy_for
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


# The members the legacy services read (service/legacy), each given values of every JSON type:
# at the top of the request and inside the object a service reads its fields from.
MEMBERS = ("id", "xid", "company", "project", "projects", "person", "absence", "custom_field",
           "time_entry", "task", "from", "to", "start", "end", "duration", "comment", "name",
           "filter", "limit", "offset")
ANY_VALUES: tuple[Any, ...] = (None, True, -1, 2**63, 1e308, "", "x" * 40, "2026-13-45 25:61:61",
                               [], [[]], {}, {"id": {"id": None}}, ["a", 1, None, {}])


async def test_every_service_answers_any_member_of_any_type(org: Org) -> None:
    """Each legacy service, with every member it may read set to one value of each JSON type
    (flat, and inside each object member): answered ok or refused, never a 500 or a crash.
    (About 400 KB in all: within the account's daily transfer limit, so none is refused by it.)"""
    from service.legacy.dispatch import SERVICES

    legacy = await legacy_for(org, org.admin)
    crashed: list[str] = []
    for service in sorted(SERVICES):
        for value in ANY_VALUES:
            flat = {member: value for member in MEMBERS}
            nested = {member: dict(flat) for member in MEMBERS}
            for payload in (flat, nested):
                response = await legacy.raw({"service": service, **payload})
                body = response.json() if response.status_code == 200 else {}
                if response.status_code != 200 or body.get("status") not in ("ok", "error") \
                        or "Internal server error" in response.text:
                    crashed.append(f"{service} {json.dumps(value)[:60]}: "
                                   f"{response.status_code} {response.text[:200]}")
    assert not crashed, "\n".join(crashed)
