"""Whole-organisation reads of people a page at a time (issue #26: memory at 10,000 people).
The period reminders' pass reads the active people's ids, then PAGE people a request with the
reference `getPersons(filter:)` (ids chained by OR), and decides page by page: the same
verdicts as one read, no request holding more than a page. The escalation pass reads only
the waiting timesheets' owners' reminder settings and only the administrators' role. Over
HTTP, as with a hosted service; SQLite and PostgreSQL (`org`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.mail.outbound.test_away_local_days import Counted
from tests.mail.reviews_support import runtime_of
from tests.support import Org
from timebot import person_pages
from timebot.client import ServiceClient
from timebot.notify.period_reminders import period_verdicts
from timebot.person_pages import page_filter


async def never_sent(_key: str) -> bool:
    return False


Sent = list[tuple[str, dict[str, object]]]


async def verdicts_of_a_pass(org: Org) -> tuple[dict[str, str], Sent]:
    """{person id: why not ("" when due)} of one preview pass, and its requests."""
    transport = Counted()
    client = ServiceClient(org.live.graphql_url, http_transport=transport)
    try:
        runtime = replace(runtime_of(org), client=client)
        found = {str(v.person["id"]): v.why_not async for v in period_verdicts(
            runtime, org.id, never_sent, 0, explain=True)}
    finally:
        await client.close()
    return found, transport.sent


async def test_the_reminders_pass_reads_people_a_page_at_a_time(
        org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    members = [await org.add_member(f"Paged {i}") for i in range(7)]
    whole, _ = await verdicts_of_a_pass(org)
    assert {m.id for m in members} <= set(whole)
    monkeypatch.setattr(person_pages, "PAGE", 3)
    paged, sent = await verdicts_of_a_pass(org)
    assert paged == whole
    reads = [variables for name, variables in sent if name.startswith("query SchedulerPeople")]
    sizes = [len(v["page"]) for v in reads]  # type: ignore[arg-type]
    assert len(whole) <= sum(sizes) <= len(whole) + 1  # (timebot's own person: left out)
    assert sizes == [3] * (sum(sizes) // 3) + ([sum(sizes) % 3] if sum(sizes) % 3 else [])
    assert [name for name, _ in sent].count("query PersonIds") == 1
    assert all(name != "query SchedulerPeople" or v.get("page") for name, v in sent)


def test_a_page_filter_matches_exactly_its_people() -> None:
    assert page_filter(["a", "b"]) == [{"id": "a", "following": "OR"},
                                       {"id": "b", "following": "OR"}]
    assert page_filter([]) == []
