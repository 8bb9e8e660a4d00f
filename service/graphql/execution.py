"""Executing a GraphQL request: authentication, one unit of work, audit, result shaping."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from inspect import isawaitable
from types import CoroutineType
from typing import Any, TypeGuard, cast

import structlog
from graphql import (
    ExecutionResult,
    FieldNode,
    GraphQLError,
    GraphQLObjectType,
    GraphQLSchema,
    OperationDefinitionNode,
    execute,
)
from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import session_scope
from service.errors import (
    AccountInactive,
    PermissionDenied,
    ServiceError,
)
from service.graphql.context import RequestContext
from service.graphql.credentials import (
    Identity,
    has_credentials,
    identify,
    is_anonymous_operation,
    may_be_anonymous,
    missing_credentials,
)
from service.graphql.documents import Documents, Prepared
from service.graphql.fast_executor import fast_executor_class
from service.graphql.fastpath import is_plain
from service.graphql.limits import check_variables
from service.graphql.name_arguments import checked_resolver
from service.graphql.refusals import omitting_refusals
from service.graphql.slicing import pause_if_due
from service.models import AuditTrail, Organisation, Person
from service.signin.web import SigninConfig, WebExchange

log = structlog.get_logger("service.graphql")


@dataclass
class GraphQLResponse:
    status: int
    body: dict[str, Any]


class Executor:
    """Runs requests against the schema; one session (and transaction) per request."""

    def __init__(
        self,
        schema: GraphQLSchema,
        sessions: async_sessionmaker[AsyncSession],
        clock: Clock,
        after_commit: Callable[[list[Any]], Any] | None = None,
        read_sessions: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        self.schema = schema
        self.sessions = sessions
        self.read_sessions = read_sessions or sessions
        self.clock = clock
        self.after_commit = after_commit
        self.documents = Documents(schema)
        self.signin = SigninConfig()  # demo mode, secure cookies, mail hooks (sign-in codes)

    async def key_refusal(
        self, apikey: str | None, web: WebExchange | None = None
    ) -> GraphQLResponse | None:
        """The answer to a request whose credentials (key, or session cookie with its CSRF
        token) are not valid (one lookup), or None."""
        if not has_credentials(apikey, web):
            return _key_refused(missing_credentials(web))
        async with session_scope(self.read_sessions) as session:
            try:
                await identify(session, apikey, web, self.clock.now_ms())
            except ServiceError as error:
                return _key_refused(error)
        return None

    async def run(
        self,
        payload: Any,
        apikey: str | None,
        operation_name: str | None = None,
        key_checked: bool = False,
        web: WebExchange | None = None,
    ) -> GraphQLResponse:
        """`key_checked`: the caller has just found the key valid (`key_refusal`). `web`:
        the browser's side (cookies) when the request came over HTTP."""
        if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
            return GraphQLResponse(400, {"errors": [{"message": "Must provide query string."}]})
        variables = payload.get("variables") or {}
        if not isinstance(variables, dict):
            return GraphQLResponse(400, {"errors": [{"message": "variables must be an object"}]})
        operation_name = payload.get("operationName") or operation_name
        if not isinstance(operation_name, str | None):
            message = "operationName must be a string"
            return GraphQLResponse(400, {"errors": [{"message": message}]})
        query: str = payload["query"]
        anonymous = not has_credentials(apikey, web)
        if anonymous:
            # Only the sign-in mutations and the link queries run without credentials:
            # anything else is refused before its document is parsed.
            if not may_be_anonymous(query):
                return _key_refused(missing_credentials(web))
            anonymous_document = self.documents.cached(query) or await self.documents.prepare(
                query
            )
            if not is_anonymous_operation(anonymous_document, operation_name,
                                          sessionless=web is None):
                return _key_refused(missing_credentials(web))
            return await self._execute(anonymous_document, variables, operation_name, None, web)
        prepared = self.documents.cached(query)
        if prepared is None:
            # A new document is parsed only for a valid key: without one, a request costs
            # one lookup. (The document decides the session, so the key is looked up again
            # below: only the first request of each document pays twice.)
            refusal = None if key_checked else await self.key_refusal(apikey, web)
            if refusal is not None:
                return refusal
            prepared = await self.documents.prepare(query)
        return await self._execute(prepared, variables, operation_name, apikey, web)

    async def _execute(
        self,
        prepared: Prepared,
        variables: dict[str, Any],
        operation_name: str | None,
        apikey: str | None,
        web: WebExchange | None,
    ) -> GraphQLResponse:
        """Authenticate (unless anonymous: no key and no session), then execute."""
        mutation = prepared.is_mutation(operation_name)
        anonymous = not has_credentials(apikey, web)
        async with session_scope(self.sessions if mutation else self.read_sessions) as session:
            now_ms = self.clock.now_ms()
            identity: Identity | None = None
            if not anonymous:
                try:
                    identity = await identify(session, apikey, web, now_ms)
                except ServiceError as error:
                    return _key_refused(error)
            if prepared.errors or prepared.document is None:
                return GraphQLResponse(200, {"errors": [e.formatted for e in prepared.errors]})
            variables_error = check_variables(variables, prepared.shape)
            if variables_error is not None:
                return GraphQLResponse(200, {"data": None, "errors": [variables_error.formatted]})
            parsed = prepared.document
            operation = prepared.operation(operation_name)
            context = RequestContext(
                session=session,
                # Anonymous (the sign-in mutations): `signin` sets both before anything
                # below it resolves.
                organisation=identity.organisation if identity else cast(Organisation, None),
                person=identity.person if identity else cast(Person, None),
                clock=self.clock,
                now_ms=now_ms,
                mutation_savepoint=not mutation or not _one_root_field(operation),
                web=web,
                signin_config=self.signin,
                signed_in=identity.signed_in if identity else None,
                anonymous=anonymous,
                integration_key=bool(identity and identity.integration_key),
            )
            result = execute(
                self.schema,
                parsed,
                context_value=context,
                variable_values=variables,
                operation_name=operation_name,
                is_awaitable=is_awaitable,
                executor_class=_EXECUTOR_CLASS,
            )
            if isawaitable(result):
                result = await result
            assert isinstance(result, ExecutionResult)
            if context.mutation_failed:
                await session.rollback()  # the request's only mutation: nothing it wrote stays
            if context.failure_writes:
                for write in context.failure_writes:
                    await write(session)
                await session.commit()
            elif mutation and not context.mutation_failed:
                await session.commit()
            # A query's transaction ends as the session closes (not rollback(): it expires all).
        await context.run_query_writes(self.sessions)
        if context.after_commit and self.after_commit is not None:
            await self.after_commit(context.after_commit)
        return GraphQLResponse(200, shape_result(result))


def _key_refused(error: ServiceError) -> GraphQLResponse:
    if isinstance(error, AccountInactive):
        return GraphQLResponse(402, {"errors": [{"message": error.message}]})
    return GraphQLResponse(200, {"data": None, "errors": [{"message": error.message}]})


def _one_root_field(operation: OperationDefinitionNode | None) -> bool:
    """Whether the operation selects exactly one root field, unconditionally (no fragment,
    no directive): a mutation that runs alone in its request."""
    if operation is None:
        return False
    selections = operation.selection_set.selections
    return (
        len(selections) == 1
        and isinstance(selections[0], FieldNode)
        and not selections[0].directives
        and selections[0].name.value != "__typename"
    )


_AWAITABLES = (CoroutineType, asyncio.Future)
# Refused fields are left in place as nulls that shape_result omits, instead of nulling
# their parents (refusals.py).
_EXECUTOR_CLASS = omitting_refusals(fast_executor_class())


def is_awaitable(value: Any) -> TypeGuard[Awaitable[Any]]:
    """What our resolvers return when they wait: coroutines (and futures). graphql-core asks
    this of every field value; its general check costs several times more."""
    return isinstance(value, _AWAITABLES)


def wrap_resolvers(schema: GraphQLSchema) -> GraphQLSchema:
    """Give every field that has its own resolver the label of its path for permission
    refusals, and every mutation its savepoint and audit entry. Done once at schema build
    rather than as execution middleware, which would add a call to every field of every
    record (default attribute resolvers and `plain` ones cannot refuse anything)."""
    for type_name, graphql_type in schema.type_map.items():
        if type_name.startswith("__") or not isinstance(graphql_type, GraphQLObjectType):
            continue
        for field_name, field in graphql_type.fields.items():
            label = f"{type_name}.{field_name}"
            if type_name == "Mutation" and field.resolve is not None:
                field.resolve = _mutation_resolver(checked_resolver(field, field.resolve), label)
            elif field.resolve is not None and not is_plain(field.resolve):
                field.resolve = _labelling_resolver(field.resolve, label)
    return schema


def _labelling_resolver(resolve: Any, label: str) -> Any:
    def resolver(root: Any, info: Any, **args: Any) -> Any:
        try:
            result = resolve(root, info, **args)
        except PermissionDenied as error:
            error.path_label = error.path_label or label
            raise
        if is_awaitable(result):
            return _labelled(result, label)
        return result

    return resolver


def _mutation_resolver(resolve: Any, label: str) -> Any:
    def resolver(root: Any, info: Any, **args: Any) -> Any:
        return _labelled(_run_mutation(resolve, root, info, args), label)

    return resolver


async def _labelled(result: Any, label: str) -> Any:
    await pause_if_due()
    try:
        return await result
    except PermissionDenied as error:
        error.path_label = error.path_label or label
        raise


_AUDIT_INSERT = insert(cast(Table, AuditTrail.__table__))


async def _run_mutation(next_: Any, root: Any, info: Any, args: dict[str, Any]) -> Any:
    """The mutation, then its audit row, atomically: in a SAVEPOINT, or, when it is the
    request's only field, in the request's transaction itself (rolled back instead of
    committed when the mutation fails: two statements and a nested transaction less)."""
    context: RequestContext = info.context
    context.skip_audit = False
    context.audit_arguments = None
    if not context.mutation_savepoint:
        try:
            return await _mutate(next_, root, info, args)
        except BaseException:
            context.mutation_failed = True
            raise
    async with context.session.begin_nested():
        return await _mutate(next_, root, info, args)


async def _mutate(next_: Any, root: Any, info: Any, args: dict[str, Any]) -> Any:
    context: RequestContext = info.context
    result = next_(root, info, **args)
    if isawaitable(result):
        result = await result
    await context.session.flush()
    if not context.skip_audit:
        ids = _response_ids(result)
        # A Core INSERT (built once): the same row as an ORM object would make, without a
        # second pass of the unit of work.
        await context.session.execute(
            _AUDIT_INSERT,
            {
                "organisation_id": context.org_id,
                "operation_name": info.field_name,
                "person_id": context.person.id,
                "timestamp_ms": context.clock.now_ms(),
                "arguments": _as_json(
                    args if context.audit_arguments is None else context.audit_arguments
                ),
                "response_id": ids[0] if ids else None,
                "response_ids": ids,
            },
        )
    return result


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _as_json(args: dict[str, Any]) -> Any:
    """The arguments as they come back from JSON (what the audit row keeps): a copy, without
    the round trip through text, when they are scalars and lists of scalars (the usual)."""
    copied: dict[str, Any] = {}
    for name, value in args.items():
        kind = type(value)
        if kind in _JSON_SCALARS:
            copied[name] = value
        elif kind is list and all(type(item) in _JSON_SCALARS for item in value):
            copied[name] = list(value)
        else:
            return json.loads(json.dumps(args, default=str))
    return copied


def _response_ids(result: Any) -> list[str]:
    items = result if isinstance(result, list) else [result]
    ids: list[str] = []
    for item in items:
        value = item.get("id") if isinstance(item, dict) else getattr(item, "id", None)
        if isinstance(value, str):
            ids.append(value)
    return ids


def shape_result(result: ExecutionResult) -> dict[str, Any]:
    """`errors` for real errors; permission refusals leave `data` and go to permissionsErrors."""
    body: dict[str, Any] = {"data": result.data}
    errors: list[dict[str, Any]] = []
    permissions: list[str] = []
    for error in result.errors or []:
        original = error.original_error
        if isinstance(original, PermissionDenied):
            label = original.path_label or ".".join(str(p) for p in error.path or [])
            if label not in permissions:
                permissions.append(label)
            _omit(result.data, error.path)
        elif isinstance(original, ServiceError):
            errors.append({"message": original.message, "path": error.path})
        elif original is not None and not isinstance(original, GraphQLError):
            log.error("resolver_crashed", path=error.path, exc_info=original)
            errors.append({"message": "Internal server error", "path": error.path})
        else:
            errors.append(error.formatted)  # type: ignore[arg-type]
    if errors:
        body["errors"] = errors
    if permissions:
        body["permissionsErrors"] = permissions
    return body


def _omit(data: Any, path: list[str | int] | None) -> None:
    """Drop a null field at `path` from the data, as the specification says refused fields are."""
    if not path or data is None:
        return
    node = data
    for key in path[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return
        if node is None:
            return
    last = path[-1]
    if isinstance(node, dict) and isinstance(last, str) and node.get(last) is None:
        node.pop(last, None)
