"""Opaque identifiers: 24 lowercase hex digits, time-ordered like a BSON ObjectId."""

from __future__ import annotations

import os
import re
import threading
import time

_ID_RE = re.compile(r"^[0-9a-f]{24}$")
_counter = int.from_bytes(os.urandom(3), "big")
_lock = threading.Lock()
_process_random = os.urandom(5)


def new_id() -> str:
    """A new identifier: 4 bytes of seconds, 5 random bytes of this process, a 3-byte counter."""
    global _counter
    with _lock:
        _counter = (_counter + 1) % 0xFFFFFF
        count = _counter
    return (
        int(time.time()).to_bytes(4, "big") + _process_random + count.to_bytes(3, "big")
    ).hex()


def is_id(value: object) -> bool:
    return isinstance(value, str) and bool(_ID_RE.match(value))
