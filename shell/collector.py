"""The garbage collector of a serving process.

Once start-up is done, what it made (modules, the schema, the models) lives as long as the
process: it is frozen out of the collector, so that a full collection no longer walks it (that
stalled the event loop for 50-150 ms under load, the tail of every request's latency).

A full collection also comes less often: after every OLDEST_EVERY collections of the middle
generation instead of CPython's 10. A request that builds a large answer (an organisation's
10,000 pending approvals: some 400,000 objects alive at once) otherwise set off a full
collection three to five times while it ran, each holding every other request for 200-300 ms,
and the request itself took 1.6-2.2 s of CPU instead of 0.9-1.3 s. Almost all garbage here is
freed by reference counting; cycles that outlive the younger generations wait longer, which
the resident-memory figure of bench.scale measures.
"""

from __future__ import annotations

import gc

DEFAULT_THRESHOLDS = gc.get_threshold()
OLDEST_EVERY = 100
_running = 0  # apps started and not stopped in this process (the tests run several at once)


def running_apps() -> int:
    return _running


def settle_after_start() -> None:
    global _running
    _running += 1
    gc.collect()
    gc.freeze()
    young, middle, _oldest = DEFAULT_THRESHOLDS
    gc.set_threshold(young, middle, OLDEST_EVERY)


def restore_on_stop() -> None:
    """As before the first start, once the last app of the process stops."""
    global _running
    _running = max(0, _running - 1)
    if _running == 0:
        gc.unfreeze()
        gc.set_threshold(*DEFAULT_THRESHOLDS)
