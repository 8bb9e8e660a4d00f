"""Prometheus metrics of the process, and /metrics.

Under `timebot serve --workers N` each worker counts in its own process; the parent hands them
a shared directory in PROMETHEUS_MULTIPROC_DIR (`shell/supervisor.py`), where prometheus_client
keeps every worker's values, and /metrics then answers, from whichever worker, with their
aggregate. With one worker the variable is unset and the process's own registry answers."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector
from starlette.requests import Request
from starlette.responses import Response

from timebot.telemetry.queue_metrics import update_queue_gauges

MULTIPROCESS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus_client's own name; read when it is first imported."""

HTTP_REQUESTS = Counter(
    "timebot_http_requests_total", "HTTP requests handled", ["method", "route", "status"]
)
HTTP_LATENCY = Histogram(
    "timebot_http_request_seconds", "HTTP request latency", ["method", "route"]
)


def _registry() -> CollectorRegistry:
    directory = os.environ.get(MULTIPROCESS_DIR_VARIABLE)
    if not directory:
        return REGISTRY
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    return registry


def metrics_endpoint(constant: bytes = b"") -> Callable[[Request], Awaitable[Response]]:
    """`/metrics`: the registry's (every worker's) metrics, then `constant`, lines the same in
    every process (the build's)."""

    async def metrics(request: Request) -> Response:
        runtime = getattr(request.app.state, "runtime", None)
        if runtime is not None:
            await update_queue_gauges(runtime.state_sessions, runtime.clock)
        return Response(generate_latest(_registry()) + constant, media_type=CONTENT_TYPE_LATEST)

    return metrics
