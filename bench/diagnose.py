"""Where a live `timebot serve` spends a bench phase, for diagnosis: installed in the served
process (bench.mail_world, BENCH_DIAGNOSE=tasks|statements|compiles, report to BENCH_DIAGNOSE_OUT),
started on SIGUSR1 and written on SIGUSR2 (the throughput run's replies, as
BENCH_PROFILE_REPLIES).

- tasks: the process's CPU sampled (ITIMER_PROF) by the asyncio task running, and within it
  by our outermost function under the task's own (the inbox worker's phases: the reads, the
  approval, the receipt). Parts run in SQLAlchemy's greenlets show without our callers.
- statements: SQLite's work by statement — runs, virtual machine steps (a scan shows as
  thousands) and re-preparations (a statement SQLite prepares again at every run: see
  plumbing.sql_constants), from every connection the process opened.
- compiles: the statements SQLAlchemy compiled anew at a run (a miss of its compiled cache,
  or a statement without a cache key) instead of taking them from its cache.
- stalls: how long the event loop was held between two turns of a probe task (every other
  task waited meanwhile: a Slack acknowledgement, a receipt): the distribution, and the tasks
  and our functions sampled (as in `tasks`) while it was held 5 ms and more.
"""

from __future__ import annotations

import asyncio
import collections
import os
import re
import signal
import time
import weakref
from pathlib import Path
from types import FrameType
from typing import Any

_ROOT = str(Path(__file__).resolve().parent.parent) + "/"
_SAMPLE_S = 0.0005
_STEP_EVERY = 20


def _ours(frame: FrameType | None) -> list[str]:
    """Our functions on the stack, outermost first."""
    chain = []
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_ROOT) and "site-packages" not in name:
            chain.append(f"{name[len(_ROOT):-3]}:{frame.f_code.co_name}")
        frame = frame.f_back
    return chain[::-1]


def _task_name() -> str:
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    return "(no task)" if task is None else getattr(task.get_coro(), "__qualname__", "?")


class _Tasks:
    def __init__(self) -> None:
        self.tasks: collections.Counter[str] = collections.Counter()
        self.phases: collections.Counter[str] = collections.Counter()

    def start(self) -> None:
        self.tasks.clear()
        self.phases.clear()
        signal.signal(signal.SIGPROF, self._tick)
        signal.setitimer(signal.ITIMER_PROF, _SAMPLE_S, _SAMPLE_S)

    def _tick(self, _signum: int, frame: FrameType | None) -> None:
        task = _task_name()
        self.tasks[task] += 1
        chain = _ours(frame)
        # the first of ours below the task's coroutine (a worker's loop, a handler) and two more
        self.phases[f"{task} | {' > '.join(chain[-3:]) if chain else '?'}"] += 1

    def report(self) -> str:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        total = sum(self.tasks.values()) or 1
        lines = [f"{total} samples of {_SAMPLE_S * 1000:g} ms CPU", "", "by task:"]
        lines += [f"{n / total * 100:6.1f} % {name}" for name, n in self.tasks.most_common(30)]
        lines += ["", "by task and innermost functions of ours:"]
        lines += [f"{n / total * 100:6.1f} % {name}" for name, n in self.phases.most_common(80)]
        return "\n".join(lines)


class _Statements:
    def __init__(self) -> None:
        self.on = False
        self.runs: collections.Counter[str] = collections.Counter()
        self.steps: collections.Counter[str] = collections.Counter()
        self.connections: weakref.WeakSet[Any] = weakref.WeakSet()
        import plumbing.sqlite_inloop as inloop

        opened = inloop.Connection.__init__

        def watched(connection: Any, raw: Any, path: str, timeout: float) -> None:
            opened(connection, raw, path, timeout)
            self._watch(connection, raw, path.rsplit("/", 1)[-1])

        inloop.Connection.__init__ = watched  # type: ignore[method-assign,assignment]

    def _watch(self, connection: Any, raw: Any, database: str) -> None:
        self.connections.add(connection)
        current = [""]

        def traced(sql: str) -> None:
            if self.on:  # the text with its values: numbers and strings made `?` again
                text = re.sub(r"'[^']*'|\b\d+\b", "?", " ".join(sql.split()))
                current[0] = f"{database} | {text[:200]}"
                self.runs[current[0]] += 1

        def stepped() -> int:
            if self.on:
                self.steps[current[0]] += _STEP_EVERY
            return 0

        raw.set_trace_callback(traced)
        raw.set_progress_handler(stepped, _STEP_EVERY)

    def start(self) -> None:
        self.runs.clear()
        self.steps.clear()
        self.on = True

    def report(self) -> str:
        self.on = False
        prepared: collections.Counter[str] = collections.Counter()
        for connection in list(self.connections):
            database = connection.path.rsplit("/", 1)[-1]
            try:
                rows = connection.raw.execute("SELECT sql, reprep FROM sqlite_stmt").fetchall()
            except Exception:  # closed, or SQLite built without the table
                continue
            for sql, reprep in rows:
                prepared[f"{database} | {' '.join(sql.split())[:200]}"] += reprep
        lines = ["runs   VM steps a run   statement (values as ?)"]
        lines += [f"{self.runs[k]:6d} {self.steps[k] / self.runs[k]:10.0f}   {k}"
                  for k in sorted(self.runs, key=lambda k: -self.steps[k])[:60]]
        lines += ["", "prepared again (since the process started), statement:"]
        lines += [f"{n:6d}   {k}" for k, n in prepared.most_common(20) if n]
        return "\n".join(lines)


class _Compiles:
    """SQLAlchemy statements compiled anew at a run (its compiled cache missed, or the
    statement has no cache key) rather than taken from the cache, by statement."""

    def __init__(self) -> None:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine
        from sqlalchemy.engine.default import CACHE_HIT

        self.on = False
        self.runs: collections.Counter[str] = collections.Counter()
        self.compiled: collections.Counter[str] = collections.Counter()

        def executed(_connection: Any, _cursor: Any, statement: str, _parameters: Any,
                     context: Any, _many: bool) -> None:
            if not self.on:
                return
            text = " ".join(statement.split())[:200]
            self.runs[text] += 1
            status = getattr(context, "cache_hit", None)
            if status is not None and status is not CACHE_HIT:
                self.compiled[f"{status!s:.30} | {text}"] += 1

        event.listen(Engine, "after_cursor_execute", executed)

    def start(self) -> None:
        self.runs.clear()
        self.compiled.clear()
        self.on = True

    def report(self) -> str:
        self.on = False
        lines = [f"{sum(self.runs.values())} statements run, "
                 f"{sum(self.compiled.values())} compiled anew", "",
                 "compiled anew   cache status | statement"]
        lines += [f"{n:6d}   {k}" for k, n in self.compiled.most_common(30)]
        return "\n".join(lines)


class _Stalls:
    """A probe task asks the loop for a 1 ms sleep again and again: how late it comes back is
    how long the callbacks run meanwhile held the loop (uvicorn runs uvloop, whose callbacks
    cannot be timed one by one); the CPU samples taken meanwhile say whose they were."""

    PROBE_S = 0.001
    LONG_S = 0.005
    BOUNDS_MS = (1, 2, 5, 10, 20, 50, 100, 200, 500)

    def __init__(self) -> None:
        self.runs: collections.Counter[int] = collections.Counter()  # by bucket
        self.held: dict[str, float] = collections.defaultdict(float)  # loop s, long runs
        self.counts: collections.Counter[str] = collections.Counter()
        self.longest: dict[str, float] = {}
        self.samples: collections.Counter[str] = collections.Counter()  # since the last wake
        self.total_s = 0.0
        self.probing = False

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.probing = True
        loop.call_soon_threadsafe(lambda: loop.create_task(self._probe()))
        signal.signal(signal.SIGPROF, self._tick)
        signal.setitimer(signal.ITIMER_PROF, _SAMPLE_S, _SAMPLE_S)

    async def _probe(self) -> None:
        while self.probing:
            self.samples.clear()
            began = time.perf_counter()
            await asyncio.sleep(self.PROBE_S)
            self.ran(max(0.0, time.perf_counter() - began - self.PROBE_S))

    def _tick(self, _signum: int, frame: FrameType | None) -> None:
        chain = _ours(frame)
        self.samples[f"{_task_name()} | {' > '.join(chain[-2:]) if chain else '?'}"] += 1

    def ran(self, seconds: float) -> None:
        self.total_s += seconds
        self.runs[next((b for b in self.BOUNDS_MS if seconds * 1000 < b), 10_000)] += 1
        if seconds >= self.LONG_S:
            name = self.samples.most_common(1)[0][0] if self.samples else "(not sampled)"
            self.held[name] += seconds
            self.counts[name] += 1
            self.longest[name] = max(self.longest.get(name, 0.0), seconds)

    def report(self) -> str:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        self.probing = False
        runs = sum(self.runs.values()) or 1
        lines = [f"{runs} probes, {self.total_s:.1f} s late in all", "",
                 "how late a probe came back (ms, under):"]
        lines += [f"  < {bound:>5}: {self.runs[bound]:7d} ({self.runs[bound] / runs * 100:.2f} %)"
                  for bound in (*self.BOUNDS_MS, 10_000)]
        lines += ["", f"probes {self.LONG_S * 1000:g} ms late and more, by what was sampled "
                  "meanwhile (s late, probes, latest ms | task | innermost of ours):"]
        lines += [f"{held:7.2f} {self.counts[name]:6d} {self.longest[name] * 1000:7.1f} | {name}"
                  for name, held in sorted(self.held.items(), key=lambda i: -i[1])[:40]]
        return "\n".join(lines)


def diagnosed_program() -> str:
    """The `python -c` program of `timebot serve` with BENCH_DIAGNOSE's diagnosis installed
    (report to BENCH_DIAGNOSE_OUT, default diagnosis.txt)."""
    return ("from bench.diagnose import install; "
            f"install({os.environ['BENCH_DIAGNOSE']!r}, "
            f"{os.environ.get('BENCH_DIAGNOSE_OUT', 'diagnosis.txt')!r}); "
            "from shell.cli import main; main()")


def install(kind: str, path: str) -> None:
    """Start on SIGUSR1, write the report to `path` on SIGUSR2."""
    diagnosis: _Tasks | _Statements | _Compiles | _Stalls = (
        _Tasks() if kind == "tasks" else _Compiles() if kind == "compiles"
        else _Stalls() if kind == "stalls" else _Statements())
    signal.signal(signal.SIGUSR1, lambda *_: diagnosis.start())
    signal.signal(signal.SIGUSR2, lambda *_: Path(path).write_text(diagnosis.report() + "\n"))
