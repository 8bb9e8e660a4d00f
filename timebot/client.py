"""The typed GraphQL client the bot and the mail front use to reach the service, as a person.

gql parses and validates nothing here against a schema (the service may be hosted and newer);
it carries documents over httpx with the person's `apikey` header on each request, over one
pooled connection. Errors become the exceptions of timebot.errors.

Under httpx, the connections are aiohttp's (httpx-aiohttp's transport): httpx's own
connection layer (httpcore over anyio) cost about 1 ms of CPU more per request, and the mail
pipeline makes a few requests per reply. The CLI passes an ASGI transport instead.

Beside the embedded service of its own process (`timebot serve`, role all) the client skips
HTTP altogether: the shell hands it the executor as a `ServiceCall`, and each request is the
JSON body and key it would have sent, each answer the status and JSON body it would have
received, read the same way (httpx's request and response machinery and the JSON encoding of
the query cost about 160 us of CPU per call).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import httpx
from gql import GraphQLRequest, gql
from gql.transport.exceptions import TransportError
from gql.transport.httpx import HTTPXAsyncTransport
from graphql import DocumentNode, ExecutionResult, print_ast

from timebot.errors import (
    AccountInactive,
    InvalidCredentials,
    PermissionRefused,
    ServiceRequestError,
    ServiceUnavailable,
)

CREDENTIAL_MESSAGES = ("APIKeyError:",)
INACTIVE_MESSAGE = "AccountIsInactive"


class ServiceCall(Protocol):
    """The embedded service's executor, called in-process (the shell provides it): a request's
    JSON body (the callee's to keep) and `apikey` header in; out, the HTTP status and the
    body the service would have answered, as decoded from its JSON (the caller's to keep), or
    None for a body that would not have been JSON (a crash: HTTP 500)."""

    async def __call__(self, payload: dict[str, Any], apikey: str) -> tuple[int, Any]: ...


class _Transport(HTTPXAsyncTransport):
    """Keeps the service's non-standard `permissionsErrors` (in extensions) and 402 bodies."""

    def _prepare_result(self, response: httpx.Response) -> ExecutionResult:
        try:
            body = response.json()
        except ValueError as error:
            raise ServiceUnavailable(
                f"the service answered HTTP {response.status_code}, not JSON"
            ) from error
        return _result_of(response.status_code, body)


def _result_of(status: int, body: Any) -> ExecutionResult:
    """A JSON answer as a GraphQL result; not one at all (no data, no errors), or a server
    error (503: busy, try again): unavailable, a temporary failure."""
    if not isinstance(body, dict) or ("data" not in body and "errors" not in body):
        raise ServiceUnavailable(f"the service answered HTTP {status}")
    if status >= 500:
        messages = [str(e.get("message", e)) if isinstance(e, dict) else str(e)
                    for e in body.get("errors") or []]
        raise ServiceUnavailable(f"the service answered HTTP {status}: {'; '.join(messages)}")
    extensions = dict(body.get("extensions") or {})
    if body.get("permissionsErrors"):
        extensions["permissionsErrors"] = body["permissionsErrors"]
    extensions["httpStatus"] = status
    return ExecutionResult(data=body.get("data"), errors=body.get("errors"),
                           extensions=extensions)


def _json_copy(value: Any) -> Any:
    """`value` through JSON as httpx sends a body, UTF-8 included: a copy that shares nothing
    with the caller's objects (the service's JSON scalars would keep them), and what cannot be
    sent fails here as it fails to send."""
    return json.loads(
        json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        .encode("utf-8")
    )


def operation(source: str) -> GraphQLRequest:
    """A parsed GraphQL operation, ready to execute with variables."""
    return _parsed(source)


@lru_cache(maxsize=1024)
def _parsed(source: str) -> GraphQLRequest:
    # Our operations are a few constant strings: parse each once, not on every call; the
    # request then carries the text it was parsed from (no printing it back).
    return operation_of(gql(source).document, source)


def operation_of(document: DocumentNode, text: str) -> GraphQLRequest:
    """A request for `document`, sent as `text` (its source, or its printed form): for a
    document built rather than parsed (timebot.read_batching), that is neither parsed from
    its text nor printed again."""
    _remember_text(document, text)
    return GraphQLRequest(document)


_PRINTED: dict[int, tuple[DocumentNode, str]] = {}


def _remember_text(document: DocumentNode, text: str) -> None:
    if len(_PRINTED) > 1024:
        _PRINTED.clear()
    _PRINTED[id(document)] = (document, text)

TYPE_FIELDS = "query TypeFields($name: String!) { __type(name: $name) { fields { name } } }"


def _printed(document: DocumentNode) -> str:
    """print_ast once per document (by identity: hashing a document walks all of it)."""
    found = _PRINTED.get(id(document))
    if found is not None and found[0] is document:
        return found[1]
    text = print_ast(document)
    _remember_text(document, text)
    return text


class _Request(GraphQLRequest):
    """A request whose document is printed once per document, not once per call."""

    @property
    def payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"query": _printed(self.document)}
        if self.operation_name:
            payload["operationName"] = self.operation_name
        if self.variable_values:
            payload["variables"] = self.variable_values
        if self.extensions:
            payload["extensions"] = self.extensions
        return payload


class ServiceClient:
    """One connection pool to the GraphQL endpoint; every call names the key it acts with."""

    def __init__(
        self,
        url: str,
        timeout: float = 15.0,
        http_transport: httpx.AsyncBaseTransport | None = None,
        direct: ServiceCall | None = None,
    ) -> None:
        """`http_transport` lets the CLI reach the embedded service in-process (ASGI);
        `direct`, the server with its service embedded, without HTTP."""
        self.url = url
        self.timeout = timeout
        self._http_transport = http_transport
        self._direct = direct
        self._transport: _Transport | None = None  # made by start()
        self._fields: dict[str, frozenset[str]] = {}  # offers(): the fields of a type, once

    @property
    def in_process(self) -> bool:
        """Whether calls go to the embedded service's executor in this process (no HTTP)."""
        return self._direct is not None

    async def offers(self, type_name: str, field: str, *, apikey: str) -> bool:
        """Whether the service's schema has `type_name.field`. The fronts ask before they send
        a document that uses one of the embedded service's extensions (fields a hosted service
        does not have); each type is introspected once per client."""
        fields = self._fields.get(type_name)
        if fields is None:
            data = await self.execute(TYPE_FIELDS, {"name": type_name}, apikey=apikey)
            found = (data.get("__type") or {}).get("fields") or []
            fields = frozenset(str(item["name"]) for item in found)
            self._fields[type_name] = fields
        return field in fields

    def _new_transport(self) -> _Transport:
        # aiohttp's session belongs to the event loop it was opened in: a fresh one per start.
        # Imported here: a process whose service is embedded never opens it (0.2 s of start).
        from httpx_aiohttp import AiohttpTransport

        return _Transport(
            url=self.url, timeout=self.timeout,
            transport=self._http_transport or AiohttpTransport(),
        )

    async def start(self) -> None:
        if self._transport is None and self._direct is None:
            self._transport = self._new_transport()
            await self._transport.connect()  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        if self._transport is not None:
            transport, self._transport = self._transport, None
            await transport.close()  # type: ignore[no-untyped-call]

    async def execute(
        self,
        query: GraphQLRequest | str,
        variables: Mapping[str, Any] | None = None,
        *,
        apikey: str,
        allow_partial: bool = False,
    ) -> dict[str, Any]:
        """The `data` of the answer. Raises on errors; on permission refusals too unless
        `allow_partial` (then the refused fields are simply missing from the data)."""
        answer = await self.execute_raw(query, variables, apikey=apikey)
        return self.interpret(answer, allow_partial=allow_partial)

    async def execute_raw(
        self,
        query: GraphQLRequest | str,
        variables: Mapping[str, Any] | None = None,
        *,
        apikey: str,
    ) -> RawAnswer:
        """The answer as it came (data, errors, permission refusals); raises only when there
        is no GraphQL answer at all (ServiceUnavailable)."""
        parsed = operation(query) if isinstance(query, str) else query
        request = _Request(parsed, variable_values=dict(variables or {}))
        if self._direct is not None:
            result = await self._call(self._direct, request, apikey)
        else:
            await self.start()
            assert self._transport is not None
            try:
                result = await self._transport.execute(
                    request, extra_args={"headers": {"apikey": apikey}}
                )
            except ServiceUnavailable:
                raise
            except (TransportError, httpx.HTTPError, OSError) as error:
                raise ServiceUnavailable(
                    f"cannot reach the service at {self.url}: {error}"
                ) from error
        errors = [e if isinstance(e, dict) else {"message": str(e)} for e in result.errors or []]
        refused = [str(p) for p in (result.extensions or {}).get("permissionsErrors") or []]
        return RawAnswer(result.data, errors, refused)

    async def _call(
        self, direct: ServiceCall, request: _Request, apikey: str
    ) -> ExecutionResult:
        """`request` to the in-process executor, as it would have gone over HTTP."""
        payload = request.payload
        # The printed document is immutable and the same string on every call (its hash
        # cached for the service's document lookup): only the rest goes through JSON.
        query = payload.pop("query")
        try:
            if not apikey.isascii():  # httpx refuses such a header before sending anything
                apikey.encode("ascii")
            body = _json_copy(payload) if payload else {}
        except (TypeError, ValueError, RecursionError) as error:
            raise ServiceUnavailable(f"cannot reach the service at {self.url}: {error}") from error
        body["query"] = query
        status, answer = await direct(body, apikey)
        if answer is None:
            raise ServiceUnavailable(f"the service answered HTTP {status}, not JSON")
        return _result_of(status, answer)

    @staticmethod
    def interpret(answer: RawAnswer, *, allow_partial: bool = False) -> dict[str, Any]:
        """`execute`'s reading of an answer: its data, or the exception it amounts to."""
        messages = [str(e.get("message", e)) for e in answer.errors]
        if messages:
            if INACTIVE_MESSAGE in messages:
                raise AccountInactive(messages)
            if any(m.startswith(CREDENTIAL_MESSAGES) for m in messages):
                raise InvalidCredentials(messages)
            raise ServiceRequestError(messages)
        if answer.refused and not allow_partial:
            raise PermissionRefused(answer.refused)
        return dict(answer.data or {})


@dataclass(frozen=True)
class RawAnswer:
    data: dict[str, Any] | None
    errors: list[dict[str, Any]]
    refused: list[str]
