"""Structured logs (JSON lines on stderr, or readable lines on a terminal), at the level an
operator sets with TIMEBOT_LOG_LEVEL (DEBUG, INFO — the default —, WARNING, ERROR).

At INFO a handled mail reply logs one line (its outcome); what every request or message does
on the way (the HTTP access log, the GraphQL client's requests, the SMTP session's commands,
each mail queued) is logged at DEBUG.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

import structlog

from timebot.errors import ConfigError

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
DEFAULT_LEVEL = "INFO"
# Libraries that log every request or SMTP command at INFO: quiet unless DEBUG is asked for.
CHATTY_LOGGERS = ("httpx", "httpcore", "mail.log", "aiosmtpd", "uvicorn.access")


def log_level(environ: Mapping[str, str] | None = None) -> str:
    """TIMEBOT_LOG_LEVEL, checked (ConfigError naming the variable)."""
    value = (environ if environ is not None else os.environ).get("TIMEBOT_LOG_LEVEL", "")
    level = value.strip().upper() or DEFAULT_LEVEL
    if level not in LEVELS:
        raise ConfigError(
            f"TIMEBOT_LOG_LEVEL must be one of {', '.join(LEVELS)}, not {value.strip()!r}"
        )
    return level


def configure_logging(level: str | None = None) -> str:
    """Configure structlog and the standard library's logging; returns the level used."""
    level = level or log_level()
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer()
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=level, stream=sys.stderr, format="%(levelname)s %(name)s %(message)s")
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(level if level == "DEBUG" else "WARNING")
    return level
