"""Read queries issued at about the same time with the same key, sent as one request.

Several inbox messages are processed at once, and each reads its timesheet's event and
approval state. Each of those requests costs the service a fixed ~4 ms (HTTP, authentication,
execution) beside the work it asks for; asked together they cost it once. `ReadBatcher`
collects the queries given to it within a short window, per API key, and sends the copies of
each query as one document: every copy's variables renamed `b<i>_<name>` and its root fields
aliased `b<i>_<field>`, then splits the answer back.

The client of a server with its service embedded calls the service's executor in-process: no
HTTP request to save, and each merged shape (every count of copies, up to MAX_BATCH) would be a
new document for the service to parse and validate, ~5 ms a copy of the reply's read — 0.6 s of
CPU for the sixteen shapes, more than the authentication statements merging saves in a burst of
hundreds of replies from one approver (#40; a Monday's replies come from many approvers, whose
reads are never merged). There each query is sent at once, on its own, without the window's
wait.

Only plain queries are merged (one operation, no fragments); mutations never are. An answer
that cannot be attributed to one query — an error without a path of ours, a permission
refusal (its path names the field, not the alias) — makes each query of the batch run on its
own, so every caller gets exactly the answer it would have had alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from gql import GraphQLRequest
from graphql import (
    DocumentNode,
    FieldNode,
    NameNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    VariableDefinitionNode,
    VariableNode,
    Visitor,
    print_ast,
    visit,
)

from timebot.client import RawAnswer, ServiceClient, operation, operation_of

WINDOW_S = 0.01
MAX_BATCH = 16


@dataclass
class _Query:
    source: str
    variables: dict[str, Any]
    future: asyncio.Future[RawAnswer]


@dataclass
class _Pending:
    queries: list[_Query] = field(default_factory=list)
    handle: asyncio.TimerHandle | None = None


class _RenameVariables(Visitor):
    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix

    def enter_variable(self, node: VariableNode, *_: Any) -> VariableNode:
        return VariableNode(name=NameNode(value=self.prefix + node.name.value))


def _mergeable(document: DocumentNode) -> OperationDefinitionNode | None:
    """The document's one query operation when it can be merged (root fields only)."""
    if len(document.definitions) != 1:
        return None
    definition = document.definitions[0]
    if not isinstance(definition, OperationDefinitionNode):
        return None
    if definition.operation is not OperationType.QUERY or definition.directives:
        return None
    if not all(isinstance(s, FieldNode) for s in definition.selection_set.selections):
        return None
    return definition


def merge(sources: list[str], variables: list[dict[str, Any]]
          ) -> tuple[str, dict[str, Any], list[dict[str, str]]] | None:
    """One query for all: (source, variables, per query {merged alias: its own key});
    None when one of them cannot be merged."""
    merged = _merge(sources, variables)
    if merged is None:
        return None
    request, variables_of_all, aliases = merged
    return _printed_text(request), variables_of_all, aliases


def _printed_text(request: GraphQLRequest) -> str:
    return print_ast(request.document)


def _merge(sources: list[str], variables: list[dict[str, Any]]
           ) -> tuple[GraphQLRequest, dict[str, Any], list[dict[str, str]]] | None:
    shape = _merged_shape(tuple(sources))
    if shape is None:
        return None
    request, aliases = shape
    merged_variables = {
        f"b{index}_{name}": value
        for index, values in enumerate(variables)
        for name, value in values.items()
    }
    return request, merged_variables, aliases


@lru_cache(maxsize=256)
def _merged_shape(sources: tuple[str, ...]
                  ) -> tuple[GraphQLRequest, list[dict[str, str]]] | None:
    """The merged request and aliases depend only on the queries merged (a batch is a few
    copies of one query): built and printed once per shape, never parsed back."""
    definitions: list[VariableDefinitionNode] = []
    selections: list[FieldNode] = []
    aliases: list[dict[str, str]] = []
    for index, source in enumerate(sources):
        operation_node = _mergeable(operation(source).document)
        if operation_node is None:
            return None
        prefix = f"b{index}_"
        renamed = visit(operation_node, _RenameVariables(prefix))
        assert isinstance(renamed, OperationDefinitionNode)
        definitions.extend(renamed.variable_definitions or ())
        mine: dict[str, str] = {}
        for selection in renamed.selection_set.selections:
            assert isinstance(selection, FieldNode)
            own = (selection.alias or selection.name).value
            alias = prefix + own
            mine[alias] = own
            selections.append(FieldNode(
                alias=NameNode(value=alias), name=selection.name,
                arguments=selection.arguments, directives=selection.directives,
                selection_set=selection.selection_set,
            ))
        aliases.append(mine)
    document = DocumentNode(definitions=(OperationDefinitionNode(
        operation=OperationType.QUERY,
        variable_definitions=tuple(definitions),
        directives=(),
        selection_set=SelectionSetNode(selections=tuple(selections)),
    ),))
    return operation_of(document, print_ast(document)), aliases


def split(answer: RawAnswer, aliases: list[dict[str, str]]) -> list[RawAnswer] | None:
    """Each query's own answer, or None when some part cannot be attributed."""
    if answer.refused or (answer.data is None and answer.errors):
        return None
    owner = {alias: index for index, mine in enumerate(aliases) for alias in mine}
    errors: list[list[dict[str, Any]]] = [[] for _ in aliases]
    for error in answer.errors:
        path = error.get("path") if isinstance(error, dict) else None
        if not path or path[0] not in owner:
            return None
        index = owner[path[0]]
        errors[index].append({**error, "path": [aliases[index][path[0]], *path[1:]]})
    data = answer.data or {}
    return [
        RawAnswer(
            data={own: data.get(alias) for alias, own in mine.items()},
            errors=errors[index],
            refused=[],
        )
        for index, mine in enumerate(aliases)
    ]


class ReadBatcher:
    """`execute` as ServiceClient's, for read queries, merged with others of the same key."""

    def __init__(self, client: ServiceClient, *, window_s: float = WINDOW_S,
                 max_batch: int = MAX_BATCH) -> None:
        self.client = client
        self.window_s = window_s
        self.max_batch = max_batch
        self._pending: dict[str, _Pending] = {}
        self.requests_sent = 0  # how many HTTP requests the batches took (for tests)

    async def execute(self, source: str, variables: Mapping[str, Any] | None = None, *,
                      apikey: str) -> dict[str, Any]:
        return self.client.interpret(await self.execute_raw(source, variables, apikey=apikey))

    async def execute_raw(self, source: str, variables: Mapping[str, Any] | None = None, *,
                          apikey: str) -> RawAnswer:
        """The query's own answer as it came (ServiceClient.execute_raw), merged with others
        (over HTTP)."""
        if self.client.in_process:
            self.requests_sent += 1
            return await self.client.execute_raw(source, variables, apikey=apikey)
        loop = asyncio.get_running_loop()
        query = _Query(source, dict(variables or {}), loop.create_future())
        pending = self._pending.setdefault(apikey, _Pending())
        pending.queries.append(query)
        if len(pending.queries) >= self.max_batch:
            self._flush(apikey)
        elif pending.handle is None:
            pending.handle = loop.call_later(self.window_s, self._flush, apikey)
        return await query.future

    def _flush(self, apikey: str) -> None:
        pending = self._pending.pop(apikey, None)
        if pending is None:
            return
        if pending.handle is not None:
            pending.handle.cancel()
        task = asyncio.get_running_loop().create_task(self._send(apikey, pending.queries))
        task.add_done_callback(lambda done: done.exception() if not done.cancelled() else None)

    async def _send(self, apikey: str, queries: list[_Query]) -> None:
        try:
            answers = await self._answers(apikey, queries)
        except Exception as error:  # the service is unreachable: every caller hears it
            for query in queries:
                if not query.future.done():
                    query.future.set_exception(error)
            return
        for query, answer in answers:
            if not query.future.done():
                query.future.set_result(answer)

    async def _answers(self, apikey: str, queries: list[_Query]
                       ) -> list[tuple[_Query, RawAnswer]]:
        # One merged request per query text: its shape then depends only on how many copies
        # it holds, so a query has at most `max_batch` shapes, each built here and prepared
        # (parsed, validated) by the service once. Merging different queries as well made a
        # shape of every mix of counts, hundreds of documents to prepare while a stream of
        # replies went through (in arrival order, each batch was a new document).
        groups: dict[str, list[_Query]] = {}
        for query in queries:
            groups.setdefault(query.source, []).append(query)
        answered = await asyncio.gather(*(
            self._group_answers(apikey, group) for group in groups.values()))
        return [pair for pairs in answered for pair in pairs]

    async def _group_answers(self, apikey: str, queries: list[_Query]
                             ) -> list[tuple[_Query, RawAnswer]]:
        if len(queries) > 1:
            merged = _merge([q.source for q in queries], [q.variables for q in queries])
            if merged is not None:
                source, variables, aliases = merged
                self.requests_sent += 1
                answer = await self.client.execute_raw(source, variables, apikey=apikey)
                parts = split(answer, aliases)
                if parts is not None:
                    return list(zip(queries, parts, strict=True))
        self.requests_sent += len(queries)
        return list(zip(queries, await asyncio.gather(*(
            self.client.execute_raw(q.source, q.variables, apikey=apikey) for q in queries
        )), strict=True))


__all__ = ["ReadBatcher", "merge", "split"]
