"""Parsed and validated GraphQL documents, kept in a cache bounded in entries and in size.

A document is prepared once: parsed with a token limit, its shape checked against the
request limits (`limits.py`) before the schema validation that they protect, then validated.
The outcome (the document, or the errors to answer with) is cached by its source text: the
bot's documents are a few constant strings. The cache holds at most `max_entries` documents
and `max_chars` characters of source (documents larger than an eighth of that are prepared
but not kept), so no sequence of distinct documents grows the process without bound.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from graphql import (
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
    parse,
    validate,
)

from service.graphql.limits import MAX_TOKENS, Shape, check_document, limit_error

# Documents longer than this (characters) are prepared off the event loop (the bot's
# longest document has 700; the IDE's introspection query about 1,700).
OFF_LOOP_CHARS = 4_000


@dataclass(frozen=True)
class Prepared:
    """A document ready to execute (`errors` empty), or the errors to answer with."""

    document: DocumentNode | None
    errors: list[GraphQLError]
    shape: Shape

    def operation(self, name: str | None) -> OperationDefinitionNode | None:
        if self.document is None:
            return None
        for definition in self.document.definitions:
            if isinstance(definition, OperationDefinitionNode) and (
                name is None or (definition.name is not None and definition.name.value == name)
            ):
                return definition
        return None

    def is_mutation(self, name: str | None) -> bool:
        operation = self.operation(name)
        return operation is not None and operation.operation == OperationType.MUTATION


class Documents:
    """The executor's document cache (module docstring). `prepared` counts the documents
    prepared since start: tests read it to see that a request was refused unparsed."""

    def __init__(
        self, schema: GraphQLSchema, max_entries: int = 512, max_chars: int = 4_000_000
    ) -> None:
        self.schema = schema
        self.max_entries = max_entries
        self.max_chars = max_chars
        self.prepared = 0
        self._cache: OrderedDict[str, Prepared] = OrderedDict()
        self._chars = 0
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="graphql-documents")

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def chars(self) -> int:
        return self._chars

    def cached(self, query: str) -> Prepared | None:
        prepared = self._cache.get(query)
        if prepared is not None:
            self._cache.move_to_end(query)
        return prepared

    async def prepare(self, query: str) -> Prepared:
        """The cached outcome for `query`, or a new one (parsed, checked, validated). A long
        document is prepared in a thread of its own: its parsing and validation (up to a few
        hundred milliseconds at the limits) do not hold the event loop."""
        prepared = self.cached(query)
        if prepared is None:
            if len(query) > OFF_LOOP_CHARS:
                loop = asyncio.get_running_loop()
                prepared = await loop.run_in_executor(self._thread, self._prepare, query)
            else:
                prepared = self._prepare(query)
            self._keep(query, prepared)
        return prepared

    def _prepare(self, query: str) -> Prepared:
        self.prepared += 1
        try:
            document = parse(query, max_tokens=MAX_TOKENS)
        except GraphQLError as error:
            if "tokens" in error.message and str(MAX_TOKENS) in error.message:
                return Prepared(None, [limit_error("maxTokens", "the document is too long")],
                                Shape())
            return Prepared(None, [error], Shape())
        except RecursionError:
            return Prepared(None, [limit_error("maxDepth", "the document nests too deeply")],
                            Shape())
        shape, refusal = check_document(self.schema, document)
        if refusal is not None:
            return Prepared(None, [refusal], shape)
        errors = validate(self.schema, document)
        if errors:
            return Prepared(None, list(errors), shape)
        return Prepared(document, [], shape)

    def _keep(self, query: str, prepared: Prepared) -> None:
        size = len(query)
        if size > self.max_chars // 8:
            return
        self._cache[query] = prepared
        self._chars += size
        while len(self._cache) > self.max_entries or self._chars > self.max_chars:
            oldest, _ = self._cache.popitem(last=False)
            self._chars -= len(oldest)
