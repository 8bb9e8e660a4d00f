"""The one ASGI app: the embedded service's endpoints, health, metrics (and, as they are
configured, Slack, webhooks, one-click links and the outbox)."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import structlog
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route

from plumbing.clock import SYSTEM_CLOCK, Clock
from shell.assembly import install_components
from shell.build import build_runtime
from shell.build_info import build_info, build_info_metric
from shell.busy import busy_handlers
from shell.collector import restore_on_stop, settle_after_start
from shell.health import liveness, readiness
from shell.response_headers import ResponseHeaders
from timebot.config import Settings
from timebot.events.webhooks import webhook_route
from timebot.telemetry.metrics import HTTP_LATENCY, HTTP_REQUESTS, metrics_endpoint

log = structlog.get_logger("shell.app")

def create_app(
    settings: Settings, clock: Clock | None = None, *, auto_subscribe: bool = True,
    listen_sockets: dict[str, socket.socket] | None = None,
) -> Starlette:
    """`listen_sockets`: the mail listeners' sockets bound by a `--workers` parent."""
    built = build_runtime(settings, clock or SYSTEM_CLOCK)
    runtime, service = built.runtime, built.service
    runtime.auto_subscribe = auto_subscribe
    runtime.listen_sockets = dict(listen_sockets or {})
    routes: list[BaseRoute] = []
    if service is not None:
        routes.extend(service.routes())

    if settings.runs_fronts:
        routes.append(
            webhook_route(runtime.subscriptions, runtime.events, runtime.event_worker.wake_for)
        )
    install_components(runtime, service, built.mail, routes)
    # The fronts' consumers are on the bus: the webhooks subscribe to what they handle (a
    # process without them, the CLI, does not know it: "*" for a webhook it creates).
    runtime.subscriptions.events = runtime.bus.events
    build = build_info(settings)
    routes.append(Route("/healthz", liveness(build)))
    routes.append(Route("/readyz", readiness(runtime, service)))
    routes.append(Route("/metrics", metrics_endpoint(build_info_metric(build))))

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await runtime.start()
        settle_after_start()  # the collector, for a long-lived process (shell.collector)
        log.info(
            "started", role=settings.role, embedded=settings.embedded, graphql=settings.graphql_url
        )
        try:
            yield
        finally:
            restore_on_stop()
            await runtime.stop()

    app = _App(routes=routes, lifespan=lifespan, exception_handlers=busy_handlers())
    app.state.runtime = runtime
    app.state.service = service
    app.state.mail = built.mail
    app.add_middleware(_MetricsMiddleware)
    return app


class _App(Starlette):
    """Starlette, with `ResponseHeaders` outside even its error handling: a 500 carries them."""

    def build_middleware_stack(self) -> Any:
        return ResponseHeaders(super().build_middleware_stack())


class _MetricsMiddleware:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500}

        async def send_wrapper(message: Any) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        route = scope["path"].split("/")[1] if scope["path"] != "/" else ""
        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            HTTP_REQUESTS.labels(scope["method"], route, str(status["code"])).inc()
            HTTP_LATENCY.labels(scope["method"], route).observe(time.perf_counter() - started)
