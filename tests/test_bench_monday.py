"""bench.monday at a tiny size, so the bench cannot rot: a company of 120 people (20 of them
employees) on a real `timebot serve` on SQLite, every path alone and then mixed, from outside.
No timing is asserted: only that every figure comes out, that every submission got its review
mail and every reply its receipt exactly once, that the reminder runs reminded everyone (at
least once), and that Slack answered every command."""

from __future__ import annotations

import asyncio

import pytest

from bench import monday

# Minutes of work in one test: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow


def test_monday_at_tiny_size(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (("PEOPLE", "120"), ("SUBMIT_SECONDS", "4"), ("ALONE_SECONDS", "1"),
                        ("RATE", "4"), ("WAIT", "120")):
        monkeypatch.setenv(f"BENCH_MONDAY_{name}", value)
    figures, alone, mixed = asyncio.run(monday.measure())
    assert [figure.name for figure in figures] == list(monday.FIGURES)
    assert all(figure.value > 0 and figure.baseline > 0 for figure in figures)
    for paths, replies in ((alone, 4), (mixed, 16)):
        assert (paths.reviews_lost, paths.reviews_doubled) == (0, 0)
        assert paths.submissions_refused == []
        assert (len(paths.receipts_ms), paths.receipts_lost, paths.receipts_doubled) == (
            replies, 0, 0)
        # Everyone reminded once, the operator too (`timebot reminders send --at` beside a
        # running timebot: its mail is handed over on the real clock, never sent twice).
        assert paths.reminders == (121, 121, 0)
        assert len(paths.acks) == replies and {s for _, _, s in paths.acks} == {200}
