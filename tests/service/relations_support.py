"""Set-up of the relations and item attributes tests: one organisation per backend and
module (`world`, with an employee), items made over GraphQL, and reads of an item's
attributes."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.service.access_support import project, tag
from tests.support import LiveServer, Member, Org, new_org


@dataclass
class World:
    org: Org
    employee: Member

    @property
    def admin(self) -> Any:
        return self.org.admin.gql


@pytest.fixture(scope="module")
async def world(live: LiveServer, http: httpx.AsyncClient) -> AsyncIterator[World]:
    org = await new_org(live, http)
    yield World(org, await org.add_member("Erin"))


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:6]}"


async def new_person(w: World) -> str:
    return (await w.org.add_member(unique("P"))).id


async def new_tag(w: World) -> str:
    return await tag(w.org, unique("T"))


async def new_project(w: World) -> str:
    return await project(w.org, unique("Pr"))


async def new_subproject(w: World) -> str:
    return await project(w.org, unique("Sub"), await new_project(w))


async def new_task(w: World) -> str:
    data = await w.admin("mutation($n: SvcName!) { addTask(name: $n) { id } }",
                         {"n": unique("Task")})
    return str(data["addTask"]["id"])


async def new_schedule(w: World) -> str:
    data = await w.admin("mutation($n: SvcName!) { addScheduleType(name: $n, "
                         "calendarStartTime: 1767225600000) { id } }", {"n": unique("S")})
    return str(data["addScheduleType"]["id"])


Factory = Callable[[World], Awaitable[str]]
GETTERS = {"personId": "getPerson", "tagId": "getTag", "projectId": "getProject",
           "subProjectId": "getProject", "taskId": "getTask", "scheduleTypeId": "getScheduleType"}


async def read(w: World, argument: str, item_id: str, selection: str) -> Any:
    getter = GETTERS[argument]
    data = await w.admin(f"query($id: SvcId!) {{ {getter}(id: $id) {{ {selection} }} }}",
                         {"id": item_id})
    return data[getter]


def values(relations: list[dict[str, Any]]) -> list[str]:
    return [r["value"]["id"] for r in relations]


def duo(operation: str, member: str, item: str) -> str:
    """A mutation of two ids ($m, $i) returning its SvcRawRelation."""
    return (f"mutation($m: SvcId!, $i: SvcId!) {{ {operation}({member}: $m, {item}: $i) "
            "{ id sourceId sourceKey targetId targetKey } }")


START = 1_767_225_600_000
