"""Rate limits of sensitive operations (the specification: loading public holidays).

In-process, per organisation and person, a sliding window on the request clock. Each process
counts on its own: several processes behind one database each allow the limit.
"""

from __future__ import annotations

from collections import deque

from service.errors import RuleViolation

HOLIDAY_LOADS_PER_MINUTE = 30
WINDOW_MS = 60_000

_windows: dict[tuple[str, str, str], deque[int]] = {}


class RateLimited(RuleViolation):
    """Too many calls of a rate-limited operation."""


def hit(action: str, org_id: str, person_id: str, now_ms: int,
        limit: int = HOLIDAY_LOADS_PER_MINUTE) -> None:
    """Counts one call; RateLimited when the person already made `limit` in the last minute."""
    window = _windows.setdefault((action, org_id, person_id), deque())
    while window and window[0] <= now_ms - WINDOW_MS:
        window.popleft()
    if len(window) >= limit:
        wait = max(1, (window[0] + WINDOW_MS - now_ms + 999) // 1000)
        raise RateLimited(f"Rate limit: {action} is allowed at most {limit} times a minute "
                          f"per person; try again in {wait} s")
    window.append(now_ms)
