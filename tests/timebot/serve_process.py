"""`timebot serve` as a subprocess, the way a newcomer starts it: its stdout and stderr lines
collected as they come, healthy once /healthz answers, stopped with SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.support import LOOPBACK_ALLOWED, TEST_SECRET_KEY

TIMEBOT = Path(sys.executable).with_name("timebot")


def serve_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without any timebot or Slack settings, on its own data dir."""
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("TIMEBOT_", "SLACK_"))
    }
    env.update(TIMEBOT_DATA_DIR=str(data_dir), TIMEBOT_SECRET_KEY=TEST_SECRET_KEY,
               TIMEBOT_OUTBOUND_ALLOWED_NETWORKS=LOOPBACK_ALLOWED, **extra)
    return env


@dataclass
class Served:
    process: asyncio.subprocess.Process
    base: str
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)


async def _read_lines(stream: asyncio.StreamReader, into: list[str]) -> None:
    while line := await stream.readline():
        into.append(line.decode(errors="replace"))


@asynccontextmanager
async def serving(env: dict[str, str], *args: str, cwd: Path) -> AsyncIterator[Served]:
    """Start `timebot serve ARGS` and wait until it answers /healthz (60 s at most)."""
    port = int(env["TIMEBOT_HTTP_PORT"])
    process = await asyncio.create_subprocess_exec(
        str(TIMEBOT), "serve", *args, env=env, cwd=str(cwd),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    served = Served(process, f"http://127.0.0.1:{port}")
    readers = [
        asyncio.create_task(_read_lines(process.stdout, served.out)),
        asyncio.create_task(_read_lines(process.stderr, served.err)),
    ]
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            for _ in range(600):
                if process.returncode is not None:
                    break
                try:
                    if (await http.get(f"{served.base}/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
        assert process.returncode is None, "".join(served.out + served.err)
        yield served
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout=30)
        except TimeoutError:
            process.kill()
            await process.wait()
        await asyncio.gather(*readers)
