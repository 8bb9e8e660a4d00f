"""Put on PYTHONPATH by the upgrade test for head's `timebot serve`: its wall clock moved by
TIMEBOT_TEST_CLOCK_OFFSET_MS (time.time and time.time_ns, which timebot's clock reads), so that
head runs an hour after the release's fixture was made: the links and reply addresses the
release mailed are then as young as in an upgrade done the day they went out (they expire
after 14 and 30 days). Without that variable nothing changes."""

import os
import time

_OFFSET_MS = int(os.environ.get("TIMEBOT_TEST_CLOCK_OFFSET_MS", "0") or 0)
if _OFFSET_MS:
    _time, _time_ns = time.time, time.time_ns
    time.time = lambda: _time() + _OFFSET_MS / 1000
    time.time_ns = lambda: _time_ns() + _OFFSET_MS * 1_000_000
