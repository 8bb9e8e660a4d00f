"""The order the suite's files are handed to the xdist workers in (tests/conftest.py): `--dist
loadfile` gives files out in collection order, so a long file given out late runs alone at the
end while the other workers idle. The longest files go first, longest first; then the other
files with a test marked slow; then the rest by their number of tests, most first. A file's
tests keep their order. Every worker computes the same order (the collection is the same)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

# Seconds each file's tests took in a whole run of four workers (on a machine busy with
# more; `-p tests.suite_timeline` lists them), longest first: those of 50 s or more.
SLOW_FIRST: tuple[str, ...] = (
    "tests/test_bench_monday.py",  # 165 (one test)
    "tests/timebot/test_cli_newcomer.py",  # 141
    "tests/timebot/test_backup.py",  # 128
    "tests/timebot/test_cli.py",  # 124
    "tests/test_bench_scale.py",  # 111 (one test)
    "tests/timebot/test_reminders_cli.py",  # ~105 (estimated: 335 before, alone 212 -> 65)
    "tests/timebot/test_workers_postgresql.py",  # 101 (one test): `serve --workers 2`
    "tests/timebot/notify/test_scheduler_quiet.py",  # 97 (given out last: the whole tail)
    "tests/upgrade/test_upgrade_from_releases.py",  # 93
    "tests/timebot/test_roles.py",  # 92
    "tests/timebot/test_workers.py",  # 91: `serve --workers 2` on SQLite
    "tests/bot/slack/test_oauth_install.py",  # 87
    "tests/test_http_sweep.py",  # 73
    "tests/deploy/test_mta_image.py",  # 65
    "tests/deploy/test_container_image.py",  # 62: the image build
    "tests/test_wheel_ide.py",  # 58: the wheel build
    "tests/bot/slack/test_sender_failures.py",  # 57
    "tests/timebot/events/test_events_in_process.py",  # 55
    "tests/timebot/test_service_import.py",  # ~55 (estimated: 185 before, alone 108 -> 30)
    "tests/service/organisation/test_account_life.py",  # ~54 (estimated: 108, alone 127 -> 63)
    "tests/protocol/test_mta_postfix.py",  # 52
    "tests/bot/teams/test_review_cards.py",  # 50
    "tests/timebot/test_response_headers.py",  # 50
    "tests/timebot/test_backup_refusals.py",  # 50
    "tests/timebot/telemetry/test_metrics_workers.py",  # 50
)


class Collected(Protocol):
    @property
    def nodeid(self) -> str: ...

    @property
    def path(self) -> Path: ...

    def get_closest_marker(self, name: str) -> object | None: ...


T = TypeVar("T", bound=Collected)


def file_of(item: Collected) -> str:
    """The item's file as the root directory names it (`tests/…/test_x.py`)."""
    return item.nodeid.split("::", 1)[0]


def ordered(items: Sequence[T]) -> list[T]:
    rank = {name: index for index, name in enumerate(SLOW_FIRST)}
    slow: set[Path] = set()
    count: dict[Path, int] = {}
    for item in items:
        count[item.path] = count.get(item.path, 0) + 1
        if item.get_closest_marker("slow") is not None:
            slow.add(item.path)
    first = {path: index for index, path in enumerate(dict.fromkeys(i.path for i in items))}
    return sorted(items, key=lambda item: (rank.get(file_of(item), len(rank)),
                                           item.path not in slow, -count[item.path],
                                           first[item.path]))
