"""The `timebot` command run in this process: the same click entry point as the installed
script (shell.cli:main, argv, exit status, stdout and stderr apart), without the seconds of a
fresh interpreter importing everything. For tests whose subject is what a command does, not
that the console script starts: each command keeps tests through the installed script
(tests.timebot.test_cli.timebot).

The command runs in a thread of its own (it calls asyncio.run), so that a live server on the
test's loop keeps answering meanwhile; what that thread writes to sys.stdout and sys.stderr is
the command's output, what the others write (the live server's log lines) goes where it went.
os.environ is the process's: one command at a time, and the environment is exactly `env` while
it runs."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import sys
import threading
import traceback
import warnings
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import structlog
from click.testing import CliRunner

from shell.cli import main
from tests.timebot.test_cli import Run
from timebot.telemetry.logs import CHATTY

_ONE_AT_A_TIME = threading.Lock()


@dataclass(frozen=True)
class _LoggerState:
    level: int
    handlers: list[logging.Handler]
    propagate: bool
    disabled: bool


def _loggers() -> dict[str, logging.Logger]:
    return {"": logging.getLogger(), **{
        name: logger for name, logger in logging.root.manager.loggerDict.items()
        if isinstance(logger, logging.Logger)}}


@contextmanager
def _logging_kept() -> Iterator[None]:
    """`timebot service init` configures logging for its process (shell.cli._subscribe): here
    that would be the test process's (its live servers' loggers too), so the configuration
    before the command is put back."""
    before = {name: _LoggerState(logger.level, list(logger.handlers), logger.propagate,
                                 logger.disabled) for name, logger in _loggers().items()}
    show_warning = warnings.showwarning
    structlog_config = structlog.get_config()
    try:
        yield
    finally:
        structlog.configure(**structlog_config)
        if warnings.showwarning is not show_warning:
            logging.captureWarnings(False)
            warnings.showwarning = show_warning
        for name, logger in _loggers().items():
            state = before.get(name)
            if state is None:  # first made by the command: only configure_logging's own reset
                if name in CHATTY:
                    logger.setLevel(logging.NOTSET)
                continue
            logger.setLevel(state.level)
            logger.handlers[:] = state.handlers
            logger.propagate, logger.disabled = state.propagate, state.disabled


class _ThreadRouted:
    """A stream for sys.stdout or sys.stderr: writes of the command's thread to the command's
    stream, the other threads' to the stream they wrote to before."""

    def __init__(self, command_thread: int, command: TextIO, others: TextIO) -> None:
        self._command_thread = command_thread
        self._command = command
        self._others = others

    def _target(self) -> TextIO:
        return self._command if threading.get_ident() == self._command_thread else self._others

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)


class _CommandThreadRunner(CliRunner):
    @contextmanager
    def isolation(self, *args: Any, **kwargs: Any) -> Iterator[tuple[io.BytesIO, io.BytesIO,
                                                                      io.BytesIO]]:
        before_out, before_err = sys.stdout, sys.stderr
        with super().isolation(*args, **kwargs) as streams:
            command_thread = threading.get_ident()
            sys.stdout = _ThreadRouted(command_thread, sys.stdout, before_out)  # type: ignore[assignment]
            sys.stderr = _ThreadRouted(command_thread, sys.stderr, before_err)  # type: ignore[assignment]
            yield streams


def invoke(env: Mapping[str, str], *args: str) -> Run:
    """`timebot ARGS` with exactly `env` as its environment, in a thread of its own (the
    command's asyncio.run needs a thread without a running loop; the caller may be a
    coroutine). Paths in `args` and `env` must be absolute (the installed command's tests run
    it in another directory). An exception that escapes the command is exit status 1 with its
    traceback on stderr, as Python's."""
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(_invoke_here, env, args).result()


def _invoke_here(env: Mapping[str, str], args: tuple[str, ...]) -> Run:
    overrides: dict[str, str | None] = {key: None for key in os.environ if key not in env}
    overrides.update(env)
    with _ONE_AT_A_TIME, _logging_kept():
        result = _CommandThreadRunner().invoke(main, list(args), env=overrides, prog_name="timebot")
    err = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        err += "".join(traceback.format_exception(result.exception))
    return Run(result.exit_code, result.stdout, err)


async def timebot_in_process(env: Mapping[str, str], *args: str) -> Run:
    """`invoke`, the caller's event loop free meanwhile."""
    return await asyncio.to_thread(invoke, env, *args)
