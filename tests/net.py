"""Loopback helpers for tests."""

from __future__ import annotations

import asyncio
import os
import random
import socket

import uvicorn

_handed_out: set[int] = set()

# Ports are taken below the kernel's ephemeral range (Linux: 32768-60999), so that no outgoing
# connection (to PostgreSQL, a fake Slack, a mail server) takes a port between the probe and the
# server's bind; each pytest-xdist worker draws from its own slice, so that two workers never
# hand out the same port (a server that could not bind exits: uvicorn's SystemExit 3).
_LOW, _HIGH = 20_000, 32_000


def _worker_slice() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    count = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")
    index = int(worker) if worker.isdigit() else 0
    size = (_HIGH - _LOW) // max(1, int(count) if count.isdigit() else 1)
    start = _LOW + index * size
    return range(start, start + size)


def free_port() -> int:
    """A loopback port that is free now and that this process has not handed out before: once
    the probe socket is closed the kernel may offer the same port again, and a test that asked
    for two ports (HTTP and SMTP) got one port twice."""
    ports = _worker_slice()
    if len(_handed_out) > len(ports) // 2:  # long closed by now: hand them out again
        _handed_out.clear()
    for _ in range(10 * len(ports)):
        port = random.choice(ports)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free loopback port left in {ports}")


async def started(server: uvicorn.Server, what: str = "the server") -> asyncio.Task[None]:
    """Run `server` in a task and wait until it listens (60 s: a loaded host migrating
    PostgreSQL databases at start-up is slow); a server that failed to start raises here,
    never later as a connection refused."""
    task = asyncio.create_task(server.serve())
    for _ in range(3000):
        if server.started:
            return task
        if task.done():
            task.result()
            raise RuntimeError(f"{what} stopped before it started")
        await asyncio.sleep(0.02)
    server.should_exit = True
    raise RuntimeError(f"{what} did not start within 60 s")
