"""A busy machine, for taking any figure under contention: BENCH_BUSY=N (default 0: a quiet
machine) runs N CPU-burning processes during each measured run — of timebot and of its
baseline alike — and never during the set-up between runs.

Each burner is a plain Python busy loop (`while True: pass`) in a process of its own, at the
normal priority (the bench's own), never inside timebot, the baseline programs or the sink:
they compete with them for the cores as other programs on a shared machine would. They are
started (each has begun looping) just before a measured run and killed right after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# Says it is looping (one byte on stdout), then burns CPU until it is killed.
BURNER = "import sys; sys.stdout.write('.'); sys.stdout.flush()\nwhile True: pass"


def burner_count() -> int:
    count = int(os.environ.get("BENCH_BUSY", "0"))
    if count < 0:
        raise ValueError(f"BENCH_BUSY must be 0 or more, not {count}")
    return count


def mode() -> str:
    """Which machine the figures are taken on, for stderr."""
    count = burner_count()
    if not count:
        return "machine: quiet (BENCH_BUSY=N: N CPU-burning processes during each run)"
    return (f"machine: busy, {count} CPU-burning process(es) during each measured run "
            f"(BENCH_BUSY={count}, {os.cpu_count()} cores)")


@contextmanager
def busy_machine() -> Iterator[None]:
    """BENCH_BUSY burners looping for the duration of the block (nothing when it is 0)."""
    burners: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(burner_count()):
            burners.append(subprocess.Popen([sys.executable, "-c", BURNER],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE))
        for burner in burners:
            assert burner.stdout is not None
            burner.stdout.read(1)
        yield
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()
            if burner.stdout is not None:
                burner.stdout.close()
