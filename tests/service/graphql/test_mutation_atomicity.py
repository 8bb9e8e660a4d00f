"""A mutation is atomic: when it fails, nothing it wrote stays (rows written through the
session's objects and Core rows alike), both when it is the request's only field (the
request's transaction is rolled back) and when it is one of several (its SAVEPOINT is)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from sqlalchemy import Table, func, insert, select

from plumbing.db import unit_of_work, write_rows
from plumbing.ids import new_id
from service.errors import RuleViolation
from service.graphql.context import RequestContext
from service.graphql.execution import _mutation_resolver
from service.models import AuditTrail
from service.timesheets.models import JournalMessage
from tests.support import LiveServer, Org

REFUSED = 13  # the duration the patched mutation refuses, after writing
WRITE = (
    "mutation($d: Int!, $p: SvcId!) { addTimeRecord(startTime: 0, duration: $d, personId: $p)"
    " { id } }"
)
WRITE_TWICE = (
    "mutation($p: SvcId!) {"
    " a: addTimeRecord(startTime: 0, duration: 1, personId: $p) { id }"
    f" b: addTimeRecord(startTime: 0, duration: {REFUSED}, personId: $p) {{ id }} }}"
)


@contextmanager
def writing_then_failing(live: LiveServer) -> Iterator[None]:
    """addTimeRecord replaced by a mutation that writes two Journal messages (one as an object,
    flushed, one as a Core row) marked with the duration, then fails if it is REFUSED."""
    field = live.service.schema.mutation_type.fields["addTimeRecord"]  # type: ignore[union-attr]
    original = field.resolve

    async def resolve(_root: Any, info: Any, **args: Any) -> dict[str, str]:
        context: RequestContext = info.context
        content = f"marker {args['duration']}"
        message = JournalMessage(organisation_id=context.org_id, date_ms=0, content=content)
        message.id = new_id()
        context.session.add(message)
        await context.session.flush()
        await write_rows(context.session, insert(cast(Table, JournalMessage.__table__)), {
            "id": new_id(), "organisation_id": context.org_id, "date_ms": 0, "content": content,
        })
        if args["duration"] == REFUSED:
            raise RuleViolation("refused after writing")
        return {"id": message.id}

    field.resolve = _mutation_resolver(resolve, "Mutation.addTimeRecord")
    try:
        yield
    finally:
        field.resolve = original


async def written(org: Org) -> tuple[dict[str, int], int]:
    """{marker content: messages} and the audit rows of addTimeRecord, in the organisation."""
    async with unit_of_work(org.live.service.sessions) as session:
        markers = dict((await session.execute(
            select(JournalMessage.content, func.count())
            .where(JournalMessage.organisation_id == org.id)
            .group_by(JournalMessage.content)
        )).tuples().all())
        audits = await session.scalar(
            select(func.count()).select_from(AuditTrail).where(
                AuditTrail.organisation_id == org.id,
                AuditTrail.operation_name == "addTimeRecord",
            )
        )
    return markers, int(audits or 0)


async def test_a_failing_mutation_alone_in_its_request_leaves_nothing(org: Org) -> None:
    with writing_then_failing(org.live):
        body = await org.admin.gql.body(WRITE, {"d": REFUSED, "p": org.admin.id})
        assert body["errors"][0]["message"] == "refused after writing"
        assert await written(org) == ({}, 0)
        await org.admin.gql(WRITE, {"d": 2, "p": org.admin.id})
        assert await written(org) == ({"marker 2": 2}, 1)


async def test_a_failing_mutation_among_several_leaves_nothing_of_its_own(org: Org) -> None:
    with writing_then_failing(org.live):
        body = await org.admin.gql.body(WRITE_TWICE, {"p": org.admin.id})
        # b is non-null: its error nulls the whole data, yet a ran and was committed
        assert [e["path"] for e in body["errors"]] == [["b"]]
        assert await written(org) == ({"marker 1": 2}, 1)
