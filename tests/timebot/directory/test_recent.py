"""timebot.directory.recent.Recent: values reused for their time to live, and no longer held
after it — what it holds is bounded by what was put within the last ttl, not by all that
ever was."""

from __future__ import annotations

from timebot.directory.recent import SWEEP_FLOOR, Recent


class Ticks:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_value_is_reused_for_its_time_to_live_then_forgotten() -> None:
    ticks = Ticks()
    recent: Recent[str, int] = Recent(10.0, now=ticks)
    recent.put("ada", 1)
    ticks.now += 9.9
    assert recent.get("ada") == 1
    ticks.now += 0.1
    assert recent.get("ada") is None and len(recent) == 0
    recent.put("ada", 2)
    recent.forget("ada")
    assert recent.get("ada") is None


def test_what_is_held_stays_bounded_by_what_was_put_within_the_time_to_live() -> None:
    """An organisation of 10,000 looked up once each, one every 10 ms (a review fan-out): the
    cache holds about the last ten seconds' worth, never the 10,000."""
    ticks = Ticks()
    recent: Recent[int, str] = Recent(10.0, now=ticks)
    most = 0
    for person in range(10_000):
        recent.put(person, f"person {person}")
        ticks.now += 0.01
        most = max(most, len(recent))
    live = 1000  # put within the last 10 s
    assert most <= max(SWEEP_FLOOR, 2 * live) + 1
    assert recent.get(9_999) == "person 9999" and recent.get(0) is None
    # Nothing new for a minute, then one more: the sweep drops every expired value.
    ticks.now += 60
    for person in range(10_000, 10_000 + 2 * live):
        recent.put(person, "again")
    assert len(recent) <= 2 * live
    assert all(recent.get(person) is None for person in range(9_000, 10_000))
