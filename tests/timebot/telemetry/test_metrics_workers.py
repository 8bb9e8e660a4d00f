"""`timebot serve --workers 2`, a real subprocess: /metrics, whichever worker answers it, counts
the requests of both workers (never fewer than before), reports the queue gauges once, and the
workers' shared metrics directory is gone after SIGTERM."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from shell.supervisor import METRICS_DIRECTORY
from tests.net import free_port
from tests.timebot.test_cli import cli_env
from tests.timebot.two_workers import Serve, databases  # noqa: F401  (the fixture)

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

BURST = 8  # requests at once, each on a new connection
MOST_REQUESTS = 400
SCRAPES = 6
MOST_SCRAPES = 60
QUEUE_GAUGES = ("timebot_queue_depth", "timebot_queue_oldest_age_seconds", "timebot_outbox_stuck")


def _workers_that_answered(served: Serve, path: str) -> set[int]:
    return {line["worker"] for line in served.events("http_request")
            if line.get("path") == path and "worker" in line}


async def _get_alone(base: str, path: str) -> httpx.Response:
    """One request on a connection of its own: the kernel gives it to either worker."""
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.get(f"{base}{path}", headers={"Connection": "close"})


async def _healthz_until_both_answered(served: Serve) -> int:
    """GET /healthz in bursts until both workers answered some; how many were made."""
    made = 0
    while made < MOST_REQUESTS:
        replies = await asyncio.gather(*(_get_alone(served.base, "/healthz")
                                         for _ in range(BURST)))
        assert {reply.status_code for reply in replies} == {200}
        made += BURST
        await asyncio.sleep(0.2)  # the access log lines reach the reader
        if _workers_that_answered(served, "/healthz") == {0, 1}:
            return made
    raise AssertionError(f"one worker answered all {made} requests:\n{served.text()}")


def _scrape(text: str) -> tuple[float, dict[str, list[dict[str, str]]]]:
    """GET /healthz answered with 200 (over all workers), and the queue gauges' label sets."""
    healthz = 0.0
    gauges: dict[str, list[dict[str, str]]] = {name: [] for name in QUEUE_GAUGES}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "timebot_http_requests_total" \
                    and sample.labels.get("route") == "healthz" \
                    and sample.labels.get("method") == "GET" \
                    and sample.labels.get("status") == "200":
                healthz += sample.value
            if sample.name in gauges:
                gauges[sample.name].append(sample.labels)
    return healthz, gauges


async def test_metrics_add_up_the_workers_and_their_directory_goes_with_them(
    tmp_path: Path, databases: dict[str, str]  # noqa: F811
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    env = {**cli_env(data_dir), "TIMEBOT_HTTP_PORT": str(free_port()), **databases}
    directory = data_dir / METRICS_DIRECTORY
    served = Serve(env)
    async with httpx.AsyncClient(timeout=60) as http:
        await served.start(http)
    try:
        assert directory.is_dir(), served.text()
        requests = await _healthz_until_both_answered(served)

        counted: list[float] = []
        scrapes = 0
        while scrapes < MOST_SCRAPES and (
            scrapes < SCRAPES or _workers_that_answered(served, "/metrics") != {0, 1}
        ):
            reply = await _get_alone(served.base, "/metrics")
            assert reply.status_code == 200, reply.text
            healthz, gauges = _scrape(reply.text)
            counted.append(healthz)
            once_per_queue = [{"queue": "inbox"}, {"queue": "outbox"}]
            assert {name: sorted(labels, key=str) for name, labels in gauges.items()} == {
                "timebot_queue_depth": once_per_queue,
                "timebot_queue_oldest_age_seconds": once_per_queue,
                "timebot_outbox_stuck": [{}],
            }, reply.text
            scrapes += 1
            await asyncio.sleep(0.2)
        assert counted == [requests] * len(counted), (requests, counted)
        assert _workers_that_answered(served, "/metrics") == {0, 1}, served.text()
    finally:
        assert await served.stop() == 0, served.text()
    assert not directory.exists()
