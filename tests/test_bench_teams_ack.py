"""bench.teams_ack at a tiny size, so the bench cannot rot: 3 users of one tenant, then 3
tenants of one user each, at a few activities per second. No timing is asserted: only that
every figure comes out, that every activity was acked and answered exactly once, and that
nothing was written before the acks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bench import teams_ack


def test_teams_ack_at_tiny_size(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in (("RATE", "10"), ("SECONDS", "1"), ("TENANTS", "3")):
        monkeypatch.setenv(f"BENCH_TEAMS_ACK_{name}", value)
    one, three = asyncio.run(teams_ack.measure(tmp_path))
    for case, tenants in ((one, 1), (three, 3)):
        assert case.tenants == tenants
        assert (case.lost, case.doubled) == (0, 0)
        assert case.statuses == {202: 3 + 10}  # the held burst, then the measured load
        assert len(case.acks_ms) == 10 and all(ms > 0 for ms in case.acks_ms)
        assert (case.writes_before_ack, case.claimed_after) == (0, 3)
    figures = teams_ack.figures(one, three)
    assert [figure.name for figure in figures] == list(teams_ack.FIGURES)
    assert all(figure.value > 0 for figure in figures[:3])
