"""The timesheet summary: pure grouping, and loading it from the live service."""

from __future__ import annotations

from datetime import date

from tests.support import HOUR_MS, Org
from timebot.summary import hours, load_summary, summarise

MONDAY = 1_788_220_800_000  # 2026-09-01 00:00 UTC... a Tuesday; only used as a base
BERLIN = {
    "id": "p",
    "name": "Ann",
    "email": "ann@x",
    "localisation": {"timeZone": {"value": "Europe/Berlin"}},
}


def record(
    rid: str,
    ts: int,
    duration: int,
    project: str | None = None,
    absence: str | None = None,
    comment: str = "",
) -> dict[str, object]:
    return {
        "id": rid,
        "startTime": {"ts": ts},
        "duration": duration,
        "comment": comment,
        "projects": [{"id": project, "name": project}] if project else [],
        "task": None,
        "absence": {"id": absence, "name": absence} if absence else None,
    }


def test_grouping_by_local_day_project_and_absence() -> None:
    late = MONDAY + 22 * HOUR_MS + 30 * 60_000  # 00:30 next day in Berlin (UTC+2)
    summary = summarise(
        BERLIN,
        [
            record("a", MONDAY + 8 * HOUR_MS, 2 * HOUR_MS, "Acme", comment="kick-off"),
            record("b", late, HOUR_MS, "Acme"),
            record("c", MONDAY + 9 * HOUR_MS, 8 * HOUR_MS, absence="Vacation"),
        ],
        {"added": ["b"], "modified": [], "deleted": ["z"]},
        MONDAY,
        MONDAY + 7 * 24 * HOUR_MS,
    )
    assert summary.by_day == ((date(2026, 9, 1), 10 * HOUR_MS), (date(2026, 9, 2), HOUR_MS))
    assert summary.by_project == (("Acme", 3 * HOUR_MS),)
    assert summary.absences == (("Vacation", 8 * HOUR_MS),)
    assert summary.comments == ((date(2026, 9, 1), "kick-off"),)
    assert (summary.added, summary.modified, summary.deleted) == (1, 0, 1)
    assert [e.change for e in summary.entries] == [None, None, "added"]
    assert summary.total_ms == 11 * HOUR_MS and summary.changed_since_rejection


def test_hours() -> None:
    assert [hours(ms) for ms in (0, 45 * 60_000, 2 * HOUR_MS, 7 * HOUR_MS + 30 * 60_000)] == [
        "0h",
        "45m",
        "2h",
        "7h 30m",
    ]


async def test_loaded_from_the_service(org: Org) -> None:
    runtime = org.live.app.state.runtime
    bob = await org.add_member("Bob")
    project = (await org.admin.gql('mutation { addProject(name: "Website") { id } }'))[
        "addProject"
    ]["id"]
    await bob.gql(
        "mutation($p: SvcId!, $s: SvcTimestamp!, $pr: [SvcId]) {"
        " addTimeRecord(personId: $p, startTime: $s, duration: 5400000, projectIds: $pr) { id } }",
        {"p": bob.id, "s": MONDAY + 9 * HOUR_MS, "pr": [project]},
    )
    key = await runtime.directory.integration_key(org.id)
    summary = await load_summary(runtime.client, key, bob.id, MONDAY, MONDAY + 7 * 24 * HOUR_MS)
    assert summary.person_name == "Bob" and summary.by_project == (("Website", 5_400_000),)
    assert summary.time_zone == "UTC"


async def test_the_directory_finds_a_person_by_id_alone(org: Org) -> None:
    runtime = org.live.app.state.runtime
    bob = await org.add_member("Bob")
    entry = await runtime.directory.find_by_person_id(bob.id)
    assert (entry.organisation_id, entry.email, entry.source) == (org.id, bob.email, "provisioned")
    assert await runtime.directory.apikey_for(org.id, bob.id) == bob.apikey


async def test_concurrent_first_requests_for_the_integration_key_agree(org: Org) -> None:
    import asyncio

    runtime = org.live.app.state.runtime
    keys = await asyncio.gather(*(runtime.directory.integration_key(org.id) for _ in range(6)))
    assert len(set(keys)) == 1
