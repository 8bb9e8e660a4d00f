"""`timebot serve` as the benchmarks run it: its command line with `--workers N`, how many of
its workers have started (read from its log), and the CPU its processes have used."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from bench.common import note

CLI = "from shell.cli import main; main()"
STARTED = b"Application startup complete."  # uvicorn's line, once per worker


def timebot_command(*arguments: str, program: str = CLI) -> list[str]:
    """The `timebot` command line run by `program` in this interpreter."""
    return [sys.executable, "-c", program, *arguments]


def serve_command(workers: int, program: str = CLI) -> list[str]:
    """`timebot serve`, with `--workers N` when N is not 1."""
    if workers == 1:
        return timebot_command("serve", program=program)
    return timebot_command("serve", "--workers", str(workers), program=program)


def workers_started(log_path: Path) -> int:
    """How many of the workers logged their start-up in `log_path` so far."""
    try:
        return log_path.read_bytes().count(STARTED)
    except FileNotFoundError:
        return 0


def _log_tail(log_path: Path) -> str:
    return log_path.read_text()[-2000:]


async def until_ready(process: subprocess.Popen[bytes], http: httpx.AsyncClient, base: str,
                      log_path: Path, workers: int, tries: int) -> None:
    """Waits (0.1 s a try) until `timebot serve` answers /healthz and all its workers have
    started; raises when it exited meanwhile."""
    for _ in range(tries):
        if process.poll() is not None:
            raise RuntimeError(f"timebot serve exited: {_log_tail(log_path)}")
        try:
            if (await http.get(f"{base}/healthz")).status_code == 200 \
                    and workers_started(log_path) >= workers:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.1)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += map(int, (task / "children").read_text().split())
    except OSError:  # the process has just exited
        pass
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU so far of a process and of its descendants alive (Linux): with
    `--workers` the supervisor and every worker."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(child) for child in _children(pid))


def _machine_ticks() -> tuple[int, int]:
    """(busy, all) clock ticks of every core since boot (Linux /proc/stat; iowait is idle)."""
    ticks = [int(field) for field in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


@contextmanager
def cpu_used(pid: int, what: str) -> Iterator[None]:
    """Notes the CPU the block took: timebot's process tree's, in cores, and how busy the
    machine was (every process: the database server, the load, timebot) — whether a phase's
    figures were those of a machine with nothing left to give."""
    own, machine, started = cpu_seconds(pid), _machine_ticks(), time.perf_counter()
    yield
    wall = max(time.perf_counter() - started, 1e-9)
    (busy, ticks), used = _machine_ticks(), cpu_seconds(pid) - own
    busy, ticks = busy - machine[0], ticks - machine[1]
    note(f"# {what}: timebot used {used:.1f} CPU-s in {wall:.1f} s "
         f"({used / wall:.2f} cores); the machine's {os.cpu_count()} "
         f"cores were {busy / max(ticks, 1):.0%} busy")


async def settled_cpu(pid: int, what: str, limit_s: float = 300.0) -> float:
    """Wait until the process tree used under a tenth of a core for 2 s (its start-up passes
    done: a restart's catching up is not what a request meets afterwards); the seconds
    waited."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while loop.time() - started < limit_s:
        before = cpu_seconds(pid)
        await asyncio.sleep(2.0)
        if cpu_seconds(pid) - before < 0.2:
            note(f"settled after {what} in {loop.time() - started:.0f} s")
            return loop.time() - started
    note(f"still busy with {what} after {limit_s:.0f} s")
    return limit_s


def _descendants(pid: int) -> list[int]:
    children = _children(pid)
    return children + [grandchild for child in children for grandchild in _descendants(child)]


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to a process and to its descendants (with `--workers`, the workers)."""
    for pid in _descendants(process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.kill()
    process.wait()
