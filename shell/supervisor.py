"""`timebot serve --workers N`: a parent that binds the listening sockets once and supervises N
worker processes serving on them.

The parent binds the HTTP socket and, when this process runs the fronts, the SMTP and LMTP
sockets (`timebot serve` migrated both databases before), then starts N workers
(`multiprocessing`'s spawn: each a fresh interpreter; the sockets are handed over as file
descriptors). Each worker is a whole
timebot — the app under uvicorn on the inherited HTTP socket, the SMTP/LMTP listeners on the
inherited mail sockets (`loop.create_server(sock=…)`): the kernel gives each new connection to
one of the workers accepting on the socket.

What every worker runs: HTTP requests, inbound mail, the inbox, outbox, event and Slack-send
workers — their rows are claimed with leases (`timebot/state/queue.py`), so no message is
handled twice, and more processes drain them faster. What only one worker runs at a time:
the jobs registered with `runtime.singletons` (the scheduler and its reminders and digests,
the reconciler, the webhook subscription, the account upkeep, the IMAP poller, the Slack
nudges), under a lease that another worker takes over within seconds when its holder dies
(`timebot/state/singleton.py`). The outbox delivery stays in every worker: claims already keep
two workers from sending one message, and a receipt is then sent by the worker that is free.

Supervision: a worker that exits while the parent runs is started again (after a pause that
grows while it keeps dying at start, 30 s at most). SIGTERM or SIGINT to the parent drains:
each worker gets SIGTERM (uvicorn stops accepting, finishes its requests; the mail listeners
close, the inbox workers finish the rows they claimed: `timebot/state/draining.py`) and exits; the
parent waits DRAIN_SECONDS at most, kills what is left, and exits 0 when nothing had to be
killed.

Metrics: each worker counts its own requests; the parent gives them one emptied directory
(`worker-metrics` in the data dir) in PROMETHEUS_MULTIPROC_DIR, set in the environment the
workers are spawned with, so it is there before they first import prometheus_client. There
each worker's values are kept in files and /metrics, answered by any worker, sums them
(`timebot/telemetry/metrics.py`). The parent marks a worker that exited dead (its live gauges
drop out) and removes the directory when it exits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import structlog
import uvicorn
from prometheus_client.multiprocess import mark_process_dead

from timebot.config import Settings
from timebot.errors import ConfigError
from timebot.telemetry.metrics import MULTIPROCESS_DIR_VARIABLE

if TYPE_CHECKING:
    from timebot.process.runtime import Runtime

log = structlog.get_logger("shell.supervisor")

DRAIN_SECONDS = 30.0
MAX_WORKERS = 64
RESTART_PAUSE_MAX = 30.0
HEALTHY_AFTER = 10.0  # a worker that lived this long restarts at once when it dies
METRICS_DIRECTORY = "worker-metrics"


def parse_workers(value: str) -> int:
    """Pure: `--workers` as given (a whole number from 1 to MAX_WORKERS, or `auto` = the
    machine's cores); a ConfigError naming the option otherwise."""
    text = value.strip().lower()
    if text == "auto":
        return max(1, os.cpu_count() or 1)
    try:
        workers = int(text)
    except ValueError:
        raise ConfigError(
            f"--workers must be a whole number or auto, not {value!r}"
        ) from None
    if not 1 <= workers <= MAX_WORKERS:
        raise ConfigError(f"--workers must be from 1 to {MAX_WORKERS}, not {workers}")
    return workers


def _listen(host: str, port: int, variable: str) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family, backlog=2048)
    except OSError as error:
        raise ConfigError(
            f"cannot listen on {host}:{port} ({variable}): {error.strerror or error}"
        ) from error
    sock.set_inheritable(True)
    return sock


def bind_sockets(settings: Settings) -> dict[str, socket.socket]:
    """The listening sockets the workers share: "http", and with the fronts "smtp" (port 0:
    off) and "lmtp" (when set)."""
    sockets: dict[str, socket.socket] = {}
    try:
        sockets["http"] = _listen(settings.http_host, settings.http_port, "TIMEBOT_HTTP_PORT")
        if settings.runs_fronts and settings.smtp_port:
            sockets["smtp"] = _listen(settings.smtp_host, settings.smtp_port, "TIMEBOT_SMTP_PORT")
        if settings.runs_fronts and settings.lmtp_port:
            sockets["lmtp"] = _listen(settings.smtp_host, settings.lmtp_port, "TIMEBOT_LMTP_PORT")
    except ConfigError:
        for sock in sockets.values():
            sock.close()
        raise
    return sockets


async def migrate_all(settings: Settings) -> None:
    """Both schemas current before any worker starts (the workers then find nothing to do)."""
    from plumbing.db import create_engine
    from service.db import migrate as migrate_service
    from timebot.state.db import migrate as migrate_state

    engines = [(create_engine(settings.database_url), migrate_state)]
    if settings.runs_service:
        engines.append((create_engine(settings.service_database_url), migrate_service))
    for engine, migrate in engines:
        try:
            await migrate(engine)
        finally:
            await engine.dispose()


@contextmanager
def worker_metrics_directory(data_dir: Path) -> Iterator[Path]:
    """The workers' shared metrics directory, emptied (a killed parent's files would count
    again) and named in this process's environment, which the workers inherit; removed, and the
    environment restored, on the way out."""
    path = data_dir / METRICS_DIRECTORY
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    previous = os.environ.get(MULTIPROCESS_DIR_VARIABLE)
    os.environ[MULTIPROCESS_DIR_VARIABLE] = str(path)
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop(MULTIPROCESS_DIR_VARIABLE, None)
        else:
            os.environ[MULTIPROCESS_DIR_VARIABLE] = previous
        shutil.rmtree(path, ignore_errors=True)


def run_worker(settings: Settings, sockets: dict[str, socket.socket], index: int) -> None:
    """A worker process: the whole app under uvicorn, on the parent's sockets."""
    import sys

    from shell.app import create_app
    from timebot.telemetry.logs import configure_logging

    configure_logging(settings.log_level)
    structlog.contextvars.bind_contextvars(worker=index)
    stop_signals_exit_0()
    app = create_app(settings, listen_sockets=sockets)
    server = DrainFirstServer(uvicorn.Config(
        app, log_level=settings.log_level.lower(), log_config=None,
        timeout_graceful_shutdown=5, server_header=False,  # as shell.cli's: no `server` header
    ), app.state.runtime)
    server.run(sockets=[sockets["http"]])
    if not server.started:
        sys.exit(3)


class DrainFirstServer(uvicorn.Server):
    """uvicorn, but the first SIGTERM/SIGINT first drains the runtime (mail listeners closed,
    claimed inbox and outbox rows finished) while HTTP still serves — the embedded service the
    inbox calls is behind it, in this worker or another one stopping at the same moment —
    and only then shuts down as uvicorn does (open requests get 5 s)."""

    def __init__(self, config: uvicorn.Config, runtime: Runtime) -> None:
        super().__init__(config)
        self.runtime = runtime
        self._drain: asyncio.Task[None] | None = None
        self._draining = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._draining or self._loop is None or not self.started:
            super().handle_exit(sig, frame)
            return
        self._draining = True
        self._captured_signals.append(sig)  # raised again once uvicorn is done: exit 0
        loop = self._loop

        def begin() -> None:
            self._drain = loop.create_task(self._drain_then_exit())

        loop.call_soon_threadsafe(begin)

    async def _drain_then_exit(self) -> None:
        log.info("draining_worker", pid=os.getpid())
        try:
            await self.runtime.drain()
        except Exception:
            log.exception("drain_failed")
        self.should_exit = True


def _exit_quietly(_signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(0)


def stop_signals_exit_0() -> None:
    """SIGTERM (or a terminal's SIGINT, which reaches the whole process group) before uvicorn
    listens, and the one uvicorn raises again once it has shut down gracefully: exit 0 (a
    drained process is no failure; systemd and Kubernetes count death by a signal as one).
    Both a worker and `timebot serve` with one worker, which is uvicorn itself, call it."""
    signal.signal(signal.SIGTERM, _exit_quietly)
    signal.signal(signal.SIGINT, _exit_quietly)


@dataclass
class _Slot:
    index: int
    process: BaseProcess | None = None
    started: float = 0.0
    quick_deaths: int = 0
    start_after: float = 0.0


class Supervisor:
    def __init__(self, settings: Settings, workers: int, sockets: dict[str, socket.socket],
                 metrics_directory: Path, drain_seconds: float = DRAIN_SECONDS) -> None:
        self.settings = dataclasses.replace(settings, workers=workers)
        self.sockets = sockets
        self.metrics_directory = metrics_directory
        self.drain_seconds = drain_seconds
        self.context = multiprocessing.get_context("spawn")
        self.slots = [_Slot(index) for index in range(workers)]
        self.stopping = False

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if not self.stopping:
            log.info("draining", signal=signal.Signals(signum).name)
        self.stopping = True

    def _spawn(self, slot: _Slot) -> None:
        process = self.context.Process(
            target=run_worker, args=(self.settings, self.sockets, slot.index),
            name=f"timebot-worker-{slot.index}",
        )
        process.start()
        slot.process, slot.started = process, time.monotonic()
        log.info("worker_started", worker=slot.index, pid=process.pid)

    def _reap(self, slot: _Slot) -> None:
        process = slot.process
        if process is None or process.is_alive():
            return
        process.join()
        if process.pid is not None:
            mark_process_dead(process.pid, str(self.metrics_directory))  # type: ignore[no-untyped-call]
        lived = time.monotonic() - slot.started
        slot.quick_deaths = 0 if lived >= HEALTHY_AFTER else slot.quick_deaths + 1
        pause = min(RESTART_PAUSE_MAX, 0.5 * 2 ** slot.quick_deaths) if slot.quick_deaths else 0
        slot.start_after = time.monotonic() + pause
        log.warning("worker_exited", worker=slot.index, pid=process.pid,
                    exitcode=process.exitcode, restart_in_s=pause)
        process.close()
        slot.process = None

    def run(self) -> int:
        previous = {
            signum: signal.signal(signum, self._on_signal)
            for signum in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            while not self.stopping:
                for slot in self.slots:
                    self._reap(slot)
                    if slot.process is None and time.monotonic() >= slot.start_after \
                            and not self.stopping:
                        self._spawn(slot)
                sentinels = [s.process.sentinel for s in self.slots if s.process is not None]
                multiprocessing.connection.wait(sentinels, timeout=0.5)
            return self._drain()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            for sock in self.sockets.values():
                sock.close()

    def _drain(self) -> int:
        running = [s.process for s in self.slots if s.process is not None]
        for process in running:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.drain_seconds
        for process in running:
            process.join(max(0.0, deadline - time.monotonic()))
        killed = [p for p in running if p.is_alive()]
        for process in killed:
            log.error("worker_killed", pid=process.pid, after_s=self.drain_seconds)
            process.kill()
            process.join()
        log.info("stopped", workers=len(running), killed=len(killed),
                 exitcodes=[p.exitcode for p in running])
        return 1 if killed else 0


def supervise(settings: Settings, workers: int) -> int:
    """Bind, run `workers` workers until SIGTERM; the parent's exit status. The databases are
    migrated before (`timebot serve` does it first, for one worker as for several)."""
    sockets = bind_sockets(settings)
    log.info("supervising", workers=workers, listening=sorted(sockets))
    with worker_metrics_directory(settings.data_dir) as metrics_directory:
        return Supervisor(settings, workers, sockets, metrics_directory).run()
