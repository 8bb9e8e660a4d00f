"""Prometheus metrics of the process."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest
from starlette.requests import Request
from starlette.responses import Response

from timebot.queue_metrics import update_queue_gauges

HTTP_REQUESTS = Counter(
    "timebot_http_requests_total", "HTTP requests handled", ["method", "route", "status"]
)
HTTP_LATENCY = Histogram(
    "timebot_http_request_seconds", "HTTP request latency", ["method", "route"]
)


async def metrics_endpoint(request: Request) -> Response:
    runtime = getattr(request.app.state, "runtime", None)
    if runtime is not None:
        await update_queue_gauges(runtime.state_sessions, runtime.clock)
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
