"""The fronts' GraphQL requests to the embedded service of their own process (`timebot serve`,
role all), handed to its executor as a call (timebot.client.ServiceCall), without HTTP: the
same request (JSON body, `apikey` header) and the same answer (status, JSON body) as the
service's /graphql endpoint gives, without the socket, the HTTP parsing on both ends and the
request and response objects in between. Against a hosted service or in a split deployment
the client goes over the network as before."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import structlog

from plumbing.db import is_busy
from service.graphql.execution import Executor
from shell.busy import busy_body

log = structlog.get_logger("shell.executor_call")


class ExecutorCall:
    """A timebot.client.ServiceCall around the embedded service's executor."""

    def __init__(self, executor: Executor | None = None, *,
                 make: Callable[[], Executor] | None = None) -> None:
        """`executor`, or `make` to make it at the first call (a command that never calls the
        service builds no schema)."""
        if executor is None and make is None:
            raise ValueError("an executor, or what makes one")
        self._executor, self._make = executor, make

    @property
    def executor(self) -> Executor:
        if self._executor is None:
            assert self._make is not None
            self._executor = self._make()
        return self._executor

    async def __call__(self, payload: dict[str, Any], apikey: str) -> tuple[int, Any]:
        try:
            result = await self.executor.run(payload, apikey)
            # The answer through JSON, as the endpoint writes it (service.graphql.http): a
            # copy that shares nothing with the service (its JSON scalars hand out their
            # dicts), and an answer that could not be written is the endpoint's HTTP 500.
            body = json.loads(json.dumps(result.body, allow_nan=False, separators=(",", ":")))
        except Exception as error:
            if is_busy(error):  # over HTTP, 503 (shell.busy): try again shortly
                log.warning("graphql_busy_in_process", error=type(error).__name__)
                return 503, busy_body()
            # over HTTP, the server's 500: the client reports it the same way
            log.exception("graphql_failed_in_process")
            return 500, None
        return result.status, body
