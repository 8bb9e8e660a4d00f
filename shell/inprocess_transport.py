"""The fronts' GraphQL requests to the embedded service of their own process (`timebot serve`,
role all), handed to its executor without a loopback connection: the same request (JSON body,
`apikey` header) and the same answer (status, JSON body) as over HTTP, without the socket, the
HTTP parsing on both ends and the ASGI stack in between. Against a hosted service or in a split
deployment the client goes over the network as before."""

from __future__ import annotations

import json

import httpx
import structlog

from service.graphql.execution import Executor

log = structlog.get_logger("shell.inprocess_transport")


class ExecutorTransport(httpx.AsyncBaseTransport):
    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        try:
            payload = json.loads(body or b"null")
        except ValueError:
            return _json(400, {"errors": [{"message": "Body is not valid JSON."}]})
        try:
            result = await self.executor.run(payload, request.headers.get("apikey"))
        except Exception:  # over HTTP, the server's 500: the client reports it the same way
            log.exception("graphql_failed_in_process")
            return httpx.Response(500, content=b"Internal Server Error")
        return _json(result.status, result.body)


def _json(status: int, content: object) -> httpx.Response:
    body = json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()
    return httpx.Response(status, content=body, headers={"content-type": "application/json"})
