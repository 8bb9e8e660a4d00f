"""The executor's short-cut for plain fields (service.graphql.fastpath) answers exactly as
graphql-core's own executor does: the same data and the same errors, with the same messages
and paths, for values that are fine and for values that are not."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from graphql import GraphQLSchema, build_schema, execute, parse

from service.graphql.execution import is_awaitable
from service.graphql.fast_executor import fast_executor_class
from service.graphql.fastpath import plain

SDL = """
enum Colour { RED GREEN }
type Time { ts: Int! iso: String }
type Item {
  id: ID!
  name: String
  count: Int
  strict: Int!
  colour: Colour
  when: Time
  strictWhen: Time!
  greeting: String
  later: String
  soon: String
  strictLater: String!
  failing: String
  tags: [String]
  strictTags: [String!]
  children: [Item]
  strictChildren: [Item!]!
}
type Query {
  items: [Item]
  strictItems: [Item!]
  one: Item
  map: Item
}
"""


class Thing:
    def __init__(self, ident: str, **values: Any) -> None:
        self.id = ident
        self.values = values

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None


@plain
def resolve_when(thing: Any, _info: Any) -> Any:
    return thing.values.get("when_ms")


@plain
def resolve_ts(value: Any, _info: Any) -> int:
    return int(value)


@plain
def resolve_failing(thing: Any, _info: Any) -> str:
    if thing.values.get("fail"):
        raise ValueError(f"no value for {thing.id}")
    return "fine"


async def resolve_later(thing: Any, _info: Any) -> str:
    await asyncio.sleep(0)
    if thing.values.get("late_fail"):
        raise ValueError("too late")
    return f"later {thing.id}"


STEPS: list[str] = []  # what the async resolvers did, in order


async def resolve_soon(thing: Any, _info: Any) -> str:
    STEPS.append(f"soon {thing.id} starts")
    await asyncio.sleep(0)
    STEPS.append(f"soon {thing.id} ends")
    return f"soon {thing.id}"


async def resolve_strict_later(thing: Any, _info: Any) -> str | None:
    STEPS.append(f"strictLater {thing.id} starts")
    await asyncio.sleep(0)
    STEPS.append(f"strictLater {thing.id} ends")
    return None if thing.values.get("late_fail") else f"strict {thing.id}"


def schema_with(things: list[Any]) -> GraphQLSchema:
    schema = build_schema(SDL)
    item = schema.type_map["Item"]
    item.fields["when"].resolve = resolve_when  # type: ignore[attr-defined]
    item.fields["strictWhen"].resolve = resolve_when  # type: ignore[attr-defined]
    item.fields["failing"].resolve = resolve_failing  # type: ignore[attr-defined]
    item.fields["later"].resolve = resolve_later  # type: ignore[attr-defined]
    item.fields["soon"].resolve = resolve_soon  # type: ignore[attr-defined]
    item.fields["strictLater"].resolve = resolve_strict_later  # type: ignore[attr-defined]
    schema.type_map["Time"].fields["ts"].resolve = resolve_ts  # type: ignore[attr-defined]
    schema.type_map["Time"].fields["iso"].resolve = (  # type: ignore[attr-defined]
        plain(lambda value, _info: f"t{value}")
    )
    query = schema.type_map["Query"]
    query.fields["items"].resolve = lambda _root, _info: things  # type: ignore[attr-defined]
    query.fields["strictItems"].resolve = (  # type: ignore[attr-defined]
        lambda _root, _info: things
    )
    query.fields["one"].resolve = lambda _root, _info: things[0]  # type: ignore[attr-defined]
    query.fields["map"].resolve = (  # type: ignore[attr-defined]
        lambda _root, _info: {"id": "m", "name": "mapped", "strict": 1, "tags": ("a", None),
                              "strictChildren": []}
    )
    return schema


async def run(schema: GraphQLSchema, query: str, fast: bool) -> tuple[Any, list[Any]]:
    result = execute(
        schema,
        parse(query),
        is_awaitable=is_awaitable,
        executor_class=fast_executor_class() if fast else None,
    )
    if is_awaitable(result):
        result = await result
    errors = sorted((error.formatted for error in result.errors or []), key=repr)  # type: ignore[union-attr]
    return result.data, errors  # type: ignore[union-attr]


def things() -> list[Any]:
    return [
        Thing("a", name="Alpha", count=3, strict=1, colour="RED", when_ms=5,
              greeting=lambda info: f"hello from {info.field_name}", tags=["x", "y"],
              strictTags=["s"], children=[Thing("a1", strict=2, strictChildren=[])],
              strictChildren=[Thing("a2", strict=3, strictChildren=[])]),
        Thing("b", name=None, count="not a number", strict=None, colour="BLUE", when_ms=None,
              fail=True, late_fail=True, tags="xy", strictTags=["s", None],
              children=[None, Thing("b1", strict=None, strictChildren=[])],
              strictChildren=[Thing("b2", strict=4, strictChildren=[None])]),
        None,
    ]


QUERIES = [
    "{ items { id name count colour } }",
    "{ items { id strict } }",
    "{ strictItems { id strict } }",
    "{ items { id when { ts iso } } }",
    "{ items { id strictWhen { ts } } }",
    "{ items { id greeting later failing } }",
    "{ items { id tags strictTags } }",
    "{ items { id children { id strict } strictChildren { id strictChildren { id } } } }",
    "{ items { __typename id alias: name again: name } one { id ...F } }"
    " fragment F on Item { name ... on Item { count } }",
    "{ items { id name @skip(if: true) count @include(if: false) } }",
    "{ map { id name strict tags strictChildren { id } } }",
    "{ strictItems { id later } }",
    "{ items { id later soon failing } }",
    "{ items { id soon strictLater later } }",
    "{ strictItems { id strictLater soon } }",
]


@pytest.mark.skipif(fast_executor_class() is None, reason="another graphql-core")
@pytest.mark.parametrize("query", QUERIES)
async def test_the_short_cut_answers_as_graphql_core_does(query: str) -> None:
    schema = schema_with(things())
    expected = await run(schema, query, fast=False)
    assert await run(schema, query, fast=True) == expected


@pytest.mark.skipif(fast_executor_class() is None, reason="another graphql-core")
async def test_an_objects_async_fields_run_one_after_another() -> None:
    """Not each in a task of its own, interleaved: they share the request's one session."""
    for _ in range(10):  # what earlier tests left to settle in the background
        await asyncio.sleep(0)
    STEPS.clear()
    data, errors = await run(schema_with(things()[:1]), "{ one { soon strictLater } }", True)
    assert (data, errors) == ({"one": {"soon": "soon a", "strictLater": "strict a"}}, [])
    assert STEPS == ["soon a starts", "soon a ends", "strictLater a starts",
                     "strictLater a ends"]


async def test_plain_fields_are_not_wrapped_and_everything_else_is() -> None:
    from service.graphql.schema import build_schema as build_service_schema

    schema = build_service_schema()
    record = schema.type_map["SvcTimeRecord"]
    assert record.fields["startTime"].resolve.__name__ == "resolve_start_time"  # type: ignore[attr-defined,union-attr]
    get = schema.type_map["Query"].fields["getTimeRecords"].resolve  # type: ignore[attr-defined]
    assert get is not None and get.__name__ == "resolver"  # the permission label wrapper


def many_things(count: int) -> list[Any]:
    """`count` items, a few of them wrong in the ways of `things()`, far into the list."""
    made: list[Any] = []
    for index in range(count):
        if index % 97 == 50:
            made.append(Thing(f"x{index}", strict=None, fail=True, when_ms=index,
                              tags=["t", None], strictChildren=[]))
        else:
            made.append(Thing(f"i{index}", name=f"n{index}", strict=index, when_ms=index,
                              tags=["t"], strictChildren=[]))
    return made


LONG_QUERIES = [
    "{ items { id name strict when { ts iso } tags } }",
    "{ items { id failing later } }",
    "{ strictItems { id name } }",
    "{ strictItems { id strict } }",  # a null in a non-null field far into a strict list
]


@pytest.mark.skipif(fast_executor_class() is None, reason="another graphql-core")
@pytest.mark.parametrize("query", LONG_QUERIES)
async def test_a_long_list_answers_as_graphql_core_does(query: str) -> None:
    from service.graphql.fast_executor import TURN_ITEMS

    schema = schema_with(many_things(TURN_ITEMS * 3 + 7))
    expected = await run(schema, query, fast=False)
    assert await run(schema, query, fast=True) == expected


@pytest.mark.skipif(fast_executor_class() is None, reason="another graphql-core")
async def test_a_long_list_gives_the_event_loop_turns_while_it_is_completed() -> None:
    """Other requests of the process run between the parts of a long answer (a whole
    organisation's pending approvals), not only after it; a short one is done in one go."""
    from service.graphql.fast_executor import TURN_ITEMS

    async def turns_during(count: int) -> int:
        seen = 0
        done = asyncio.Event()

        async def other_request() -> None:
            nonlocal seen
            while not done.is_set():
                seen += 1
                await asyncio.sleep(0)

        other = asyncio.create_task(other_request())
        await asyncio.sleep(0)  # it has started
        seen = 0
        data, errors = await run(schema_with(many_things(count)), "{ items { id name } }",
                                 True)
        done.set()
        await other
        assert errors == [] and len(data["items"]) == count
        return seen

    assert await turns_during(TURN_ITEMS * 5) >= 4
    assert await turns_during(TURN_ITEMS) == 0
