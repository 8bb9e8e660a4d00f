"""An operation's plans are kept from one request to the next (service.graphql.plan_store):
a request of a document already executed plans nothing again, answers exactly as graphql-core
does whatever the data and the variables, is planned afresh when a directive makes the plan
depend on the variables, and its plans go when the document goes."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from graphql import DocumentNode, GraphQLSchema, OperationDefinitionNode, execute, parse

from service.graphql import plan_store
from service.graphql.execution import is_awaitable
from service.graphql.fast_executor import fast_executor_class
from tests.service.graphql.test_fastpath import QUERIES, Thing, schema_with, things

pytestmark = pytest.mark.skipif(fast_executor_class() is None, reason="another graphql-core")


def other_things() -> list[Any]:
    return [
        None,
        Thing("c", name="Gamma", count=None, strict=7, colour="GREEN", when_ms=9,
              greeting=lambda info: info.path.key, tags=None, strictTags=[],
              children=[], strictChildren=[Thing("c1", strict=8, strictChildren=[])]),
        Thing("d", name="Delta", count=2, strict=None, colour=None, when_ms="bad", fail=True,
              tags=["z"], strictTags=None, children=None, strictChildren=[]),
    ]


async def run(schema: GraphQLSchema, document: DocumentNode, fast: bool,
              variables: dict[str, Any] | None = None) -> tuple[Any, list[Any]]:
    result = execute(schema, document, variable_values=variables, is_awaitable=is_awaitable,
                     executor_class=fast_executor_class() if fast else None)
    if is_awaitable(result):
        result = await result
    errors = sorted((error.formatted for error in result.errors or []), key=repr)  # type: ignore[union-attr]
    return result.data, errors  # type: ignore[union-attr]


def operation(document: DocumentNode) -> OperationDefinitionNode:
    found = document.definitions[0]
    assert isinstance(found, OperationDefinitionNode)
    return found


@pytest.mark.parametrize("query", QUERIES)
async def test_a_document_run_again_answers_as_graphql_core_does(query: str) -> None:
    data = things()  # what the schema's root fields answer, changed between requests
    schema = schema_with(data)
    document = parse(query)
    for items in (things(), other_things(), things()):
        data[:] = items
        expected = await run(schema, parse(query), fast=False)
        assert await run(schema, document, fast=True) == expected


async def test_the_second_request_of_a_document_plans_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    executor = fast_executor_class()
    planned: list[str] = []
    original = executor._plan  # type: ignore[union-attr]

    def counting(self: Any, parent_type: Any, details: Any) -> Any:
        planned.append(f"{parent_type.name}.{details[0].node.name.value}")
        return original(self, parent_type, details)

    monkeypatch.setattr(executor, "_plan", counting)
    schema = schema_with(things())
    document = parse("{ items { id name when { ts iso } children { id strict } } one { id } }")
    first = await run(schema, document, fast=True)
    assert planned  # the first request plans its fields
    planned.clear()
    assert await run(schema, document, fast=True) == first
    assert planned == []
    again = parse("{ items { id name when { ts iso } children { id strict } } one { id } }")
    assert await run(schema, again, fast=True) == first
    assert planned  # another parse of the same text is another document: planned anew


async def test_an_operation_with_a_directive_is_planned_per_request() -> None:
    schema = schema_with(things())
    query = ("query($v: Boolean!) { items { id name @include(if: $v) "
             "...F @skip(if: $v) } } fragment F on Item { count }")
    document = parse(query)
    for value in (True, False, True):
        expected = await run(schema, parse(query), fast=False, variables={"v": value})
        assert await run(schema, document, fast=True, variables={"v": value}) == expected
    assert plan_store.shared_plans(schema, operation(document), {}) is None
    plain = parse("{ items { id } }")
    assert plan_store.shared_plans(schema, operation(plain), {}) is not None


async def test_a_directive_inside_a_fragment_counts_too() -> None:
    schema = schema_with(things())
    query = ("query($v: Boolean!) { items { ...F } } "
             "fragment F on Item { id name @include(if: $v) }")
    document = parse(query)
    for value in (True, False):
        expected = await run(schema, parse(query), fast=False, variables={"v": value})
        assert await run(schema, document, fast=True, variables={"v": value}) == expected


async def test_the_plans_go_with_their_document() -> None:
    schema = schema_with(things())
    gc.collect()
    before = plan_store.kept()
    document = parse("{ items { id name } }")
    await run(schema, document, fast=True)
    assert plan_store.kept() == before + 1
    del document
    gc.collect()
    assert plan_store.kept() == before
