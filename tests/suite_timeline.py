"""Where an xdist run's time went, file by file: `pytest -p tests.suite_timeline -n 4 --dist
loadfile` (or `make test PYTEST_ARGS="-p tests.suite_timeline"`) ends with each worker's idle
end, the longest files (what tests/slow_first.py should name, longest first) and the files
that ended last, each with its worker and when it started and ended (s from the first test).
SUITE_TIMELINE=path also writes every test phase's worker, start and stop there (JSON lines)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import pytest

LISTED = 15


@dataclass
class Span:
    worker: str
    start: float
    stop: float
    busy: float = 0.0  # the sum of its tests' phases


@dataclass
class Timeline:
    rows: list[dict[str, object]] = field(default_factory=list)
    files: dict[str, Span] = field(default_factory=dict)

    def add(self, report: pytest.TestReport, worker: str) -> None:
        self.rows.append({"worker": worker, "nodeid": report.nodeid, "when": report.when,
                          "start": report.start, "stop": report.stop})
        name = report.nodeid.split("::", 1)[0]
        span = self.files.setdefault(name, Span(worker, report.start, report.stop))
        span.start, span.stop = min(span.start, report.start), max(span.stop, report.stop)
        span.busy += report.stop - report.start

    def lines(self) -> list[str]:
        origin = min(span.start for span in self.files.values())
        end = max(span.stop for span in self.files.values())
        last: dict[str, float] = {}
        for span in self.files.values():
            last[span.worker] = max(last.get(span.worker, 0.0), span.stop)
        out = [f"{end - origin:.0f} s from the first test to the last; idle at the end: "
               + ", ".join(f"{worker} {end - stop:.0f} s" for worker, stop in sorted(last.items()))]

        def listed(title: str, spans: list[tuple[str, Span]]) -> None:
            out.append(title)
            out.extend(f"  {span.busy:6.1f} s  {span.start - origin:5.0f}-"
                       f"{span.stop - origin:<5.0f} {span.worker}  {name}"
                       for name, span in spans[:LISTED])

        by_file = list(self.files.items())
        listed("longest files (s of tests, started-ended, worker):",
               sorted(by_file, key=lambda item: -item[1].busy))
        listed("the files that ended last:", sorted(by_file, key=lambda item: -item[1].stop))
        return out


TIMELINE = Timeline()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    node = getattr(report, "node", None)  # set by xdist on the controller, with the worker
    if node is not None:
        TIMELINE.add(report, str(node.gateway.id))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TIMELINE.files:
        return
    terminalreporter.section("timeline by file")
    for line in TIMELINE.lines():
        terminalreporter.write_line(line)
    path = os.environ.get("SUITE_TIMELINE")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(row) + "\n" for row in TIMELINE.rows)
