"""The demo's away approver (issue 28): Grace Hopper, the people manager who approves
Engineering's timesheets, is on vacation from today for seven days (Berlin's days, her time
zone: Vacation records in the service, as time off is recorded), and Margaret Hamilton
submitted last week's timesheet two working days ago, so it waits for Grace alone. timebot
reads the time off and Grace's time zone over GraphQL and, one working day after the
submission (the default `approvalEscalationDelay`), asks the administrator, Ada Lovelace,
with the reason ("Grace Hopper is away until …"); the timesheet's Journal says so."""

from __future__ import annotations

import datetime as dt

from service.demo.history import _record
from service.demo.seed import HOUR_MS, DemoSeed
from service.models import Organisation
from service.timesheets.actor import Actor
from service.timesheets.submit import submit

AWAY = "grace"
AWAY_DAYS = 7  # from today, every day (so that a demo started on a Sunday shows it too)
SUBMITTER = "margaret"


async def seed_away_approver(seed: DemoSeed, organisation: Organisation) -> None:
    """Grace's vacation from today, and Margaret's timesheet of last week submitted to her."""
    today = dt.datetime.fromtimestamp(seed.now_ms / 1000, seed.zone).date()
    grace = seed.persons[AWAY]
    for day in (today + dt.timedelta(days=n) for n in range(AWAY_DAYS)):
        _record(seed, grace, seed.at(day, 9), 8 * HOUR_MS,
                absence_type=seed.absence_types["Vacation"], comment="Vacation")
    monday = today - dt.timedelta(days=today.weekday())
    start = seed.at(monday - dt.timedelta(days=7), 0)
    end = seed.at(monday, 0)
    submitted_on = seed.working_days()[1]  # two working days ago
    owner = seed.persons[SUBMITTER]
    await seed.session.flush()
    await seed.session.refresh(owner, ["role"])
    await submit(Actor(seed.session, organisation, owner, seed.at(submitted_on, 17)),
                 owner, start, end)
