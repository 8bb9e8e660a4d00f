"""Structured logs: one format for everything the process logs (JSON lines on stderr, or
readable lines on a terminal), one line per event.

timebot's own events are structlog events; the standard library's loggers (uvicorn, SQLAlchemy,
aiosmtpd, …) go through the same processors and renderer via one root handler. uvicorn must be
started with `log_config=None` so that it adds no handler of its own (a line logged twice).
Start-up chatter is quiet at INFO: Alembic's plugin and migration lines, and httpx's line per
request (the same request is already the HTTP access event of the server it calls).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

# Loggers whose INFO lines are chatter (mail.log: aiosmtpd, a line per SMTP command): shown
# only when the operator asks for DEBUG.
CHATTY = ("alembic", "httpx", "httpcore", "mail.log")


def _access_fields(
    _logger: Any, _name: str, event_dict: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """uvicorn's access line as fields: client, method, path, status (the message's arguments
    are dropped from every other foreign record: the message already holds them)."""
    record = event_dict.get("_record")
    args = event_dict.pop("positional_args", ())
    if record is not None and record.name == "uvicorn.access" and isinstance(args, tuple) \
            and len(args) == 5:
        client, method, path, _version, status = args
        event_dict.update(event="http_request", client=client, method=method, path=path,
                          status=status)
    return event_dict


def configure_logging(level: str = "INFO") -> None:
    level = level.upper()
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer()
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name, _access_fields],
            pass_foreign_args=True,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # Python's warnings (a coroutine never awaited when a request is cut off at shutdown …)
    # are events like any other: one JSON line, not a bare line on stderr.
    logging.captureWarnings(True)
    quiet = max(logging.getLevelName(level), logging.WARNING) if level != "DEBUG" else logging.DEBUG
    for name in CHATTY:
        logging.getLogger(name).setLevel(quiet)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
