"""The serving process's garbage collector (shell.collector): from the app's start, start-up's
objects are frozen out of it and a full collection comes after OLDEST_EVERY collections of the
middle generation; once the process's last app stops, as before."""

from __future__ import annotations

import gc
from pathlib import Path

from shell.collector import DEFAULT_THRESHOLDS, OLDEST_EVERY, running_apps
from tests.support import start_live_server, stop_live_server


async def test_the_collector_is_set_for_a_long_lived_process_and_restored_after(
    tmp_path: Path,
) -> None:
    others = running_apps()  # this worker's shared live servers, when it has started them
    live = await start_live_server("sqlite", tmp_path)
    try:
        assert running_apps() == others + 1
        young, middle, oldest = gc.get_threshold()
        assert (young, middle) == DEFAULT_THRESHOLDS[:2] and oldest == OLDEST_EVERY
        assert gc.get_freeze_count() > 0
    finally:
        await stop_live_server(live)
    assert running_apps() == others
    if others:
        assert gc.get_threshold()[2] == OLDEST_EVERY  # the others still run
    else:
        assert gc.get_threshold() == DEFAULT_THRESHOLDS
        assert gc.get_freeze_count() == 0
