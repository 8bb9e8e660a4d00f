"""The serving process's garbage collector (shell.collector): from the app's start, start-up's
objects are frozen out of it and a full collection comes after OLDEST_EVERY collections of the
middle generation; at its stop, as before."""

from __future__ import annotations

import gc
from pathlib import Path

from shell.collector import DEFAULT_THRESHOLDS, OLDEST_EVERY
from tests.support import start_live_server, stop_live_server


async def test_the_collector_is_set_for_a_long_lived_process_and_restored_after(
    tmp_path: Path,
) -> None:
    assert gc.get_threshold() == DEFAULT_THRESHOLDS
    live = await start_live_server("sqlite", tmp_path)
    try:
        young, middle, oldest = gc.get_threshold()
        assert (young, middle) == DEFAULT_THRESHOLDS[:2] and oldest == OLDEST_EVERY
        assert gc.get_freeze_count() > 0
    finally:
        await stop_live_server(live)
    assert gc.get_threshold() == DEFAULT_THRESHOLDS
    assert gc.get_freeze_count() == 0
