"""The staff nudges of bench/slack_workspaces.py (#27: "nudges for all of them on time").

In each organisation Nora, an employee who is a member of that organisation's workspace in the
fake Slack (her e-mail there, time zone UTC: the nudge loop's discovery links her), whose
staff nudge is due whenever the bench runs: she works every day of the week (a 7-day
schedule on her timeline, so today is a working day), her period is a day and her
`timesheetReminder` is `currentEnd` at 00:00, so the reminder of today's period has been due
since 00:00 UTC (bot/slack/staff_nudges.py, timebot/notify/period_timing.py). All of it is written
through the embedded service's GraphQL executor before `timebot serve` starts.

The reminder was due hours before the server started, so the figure counts from the server's
start: the seconds from when `timebot serve` answered HTTP (its installations' nudge loops
start within a moment of it, at the singleton jobs' first heartbeat) to the last of the N
nudges reaching the fake Slack, each one a DM
to that workspace's Nora sent with that workspace's own token (the fake's own record of
every chat.postMessage, its time included). An installation's first tick comes 60 to 120 s
after its loop starts (bot/slack/nudges.py: one interval plus a random phase of up to one more),
so a nudge due at start is on time when it comes at that first tick: the goal is every one
of them within 2 intervals (120 s) of the start plus TICK_ALLOWANCE_SECONDS for the tick's
own work (its wait for a tick slot, the service's reads, the DM). With 100 workspaces the
last phase is past 0.99 two runs in three, so the last first tick is due at about 119.4 s
and the 120 s alone would be missed by any tick that takes more than half a second. The
note also gives the longest time from a workspace's discovery (its users.list, early in its
first tick) to its nudge: what of the figure is the tick's work rather than its phase. With
one workspace the figure is its one phase, somewhere in 60 to 120 s: the baseline (and so
the ratio) varies by up to 60 s from run to run.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from bench.common import note

FIGURE = "slack_workspaces_nudges"
INTERVAL_SECONDS = 60.0  # bot.slack.nudges.NudgesPart's interval
TICK_ALLOWANCE_SECONDS = 10.0
GOAL_SECONDS = 2 * INTERVAL_SECONDS + TICK_ALLOWANCE_SECONDS
DAY_MS = 86_400_000
HOUR_MS = 3_600_000

ADD_PERSON = ("mutation($n: SvcName!, $e: SvcEmail!, $r: SvcId!) { "
              "addPerson(name: $n, email: $e, roleId: $r) { id } }")
ADD_SCHEDULE = ("mutation($n: SvcName!, $s: SvcTimestamp!) { "
                "addScheduleType(name: $n, calendarStartTime: $s) { id } }")
EVERY_DAY = "mutation($id: SvcId!, $v: Int!) { " + " ".join(
    f"d{day}: editScheduleTypeDayDuration(id: $id, dayNumber: {day}, duration: $v) {{ id }}"
    for day in range(7)) + " }"
ASSIGN = ("mutation($p: SvcId!, $s: SvcId!) { assignScheduleTimelineToPerson(personId: $p, "
          "scheduleTypeId: $s) { id } }")
DAILY_REMINDER = (
    "mutation($id: SvcId!, $r: SvcTimesheetReminderInput) { "
    "editPersonTimeSettingsPeriodicity(id: $id, periodicity: \"daily\") { id } "
    "editPersonTimeSettingsTimesheetReminder(id: $id, timesheetReminder: $r) { id } }")


def staff_email(index: int) -> str:
    return f"nora{index}@ws{index}.bench.example"


def staff_user(index: int) -> str:
    return f"UNORA{index:06d}"


def monday_ms() -> int:
    """A Monday at 00:00 UTC before today (1970-01-05 was one)."""
    return 4 * DAY_MS


async def make_nudge_due(gql: Callable[[str, dict[str, Any]], Awaitable[Any]],
                         person_id: str) -> None:
    """The person's staff nudge due at any moment of any day (`gql`: as an administrator)."""
    schedule = (await gql(ADD_SCHEDULE, {"n": f"Every day ({person_id})", "s": monday_ms()}))[
        "addScheduleType"]["id"]
    await gql(EVERY_DAY, {"id": schedule, "v": 8 * HOUR_MS})
    await gql(ASSIGN, {"p": person_id, "s": schedule})
    await gql(DAILY_REMINDER, {"id": person_id, "r": {"timing": "currentEnd", "hour": 0}})


async def prepare_nudges(env: dict[str, str], orgs: list[tuple[str, str]]) -> None:
    """In each organisation (id, admin key): the 7-day schedule and Nora, her nudge due."""
    from service.embedded import EmbeddedService
    from timebot.config import load_settings

    service = EmbeddedService(load_settings(env).service_database_url)

    try:
        for index, (_org, key) in enumerate(orgs):
            async def gql(query: str, variables: dict[str, Any], key: str = key) -> Any:
                answer = await service.executor.run({"query": query, "variables": variables},
                                                    key)
                body: dict[str, Any] = answer.body
                if body.get("errors") or body.get("permissionsErrors"):
                    raise RuntimeError(f"{query[:60]}: {body}")
                return body["data"]

            roles = (await gql("{ getRoles { id name } }", {}))["getRoles"]
            role = next(r["id"] for r in roles if r["name"].lower() == "employee")
            nora = (await gql(ADD_PERSON, {"n": f"Nora {index}", "e": staff_email(index),
                                           "r": role}))["addPerson"]["id"]
            await make_nudge_due(gql, nora)
    finally:
        await service.stop()


def nudges_in(http: httpx.Client, fake_url: str, token_of: Callable[[int], str],
              count: int) -> tuple[dict[int, float], int]:
    """(workspace index -> when its Nora's first DM with its own token reached the fake
    (time.monotonic()), how many DMs to a Nora came with another workspace's token)."""
    users = {staff_user(index): index for index in range(count)}
    users.update({"D" + user[1:]: index for user, index in list(users.items())})
    arrived: dict[int, float] = {}
    wrong = 0
    for call in http.get(f"{fake_url}/calls/chat.postMessage").json():
        index = users.get(str(call["channel"]))
        if index is None:
            continue
        if call["token"] != token_of(index):
            wrong += 1
        elif index not in arrived:
            arrived[index] = float(call["at"])
    return arrived, wrong


def first_discovery(http: httpx.Client, fake_url: str) -> dict[str, float]:
    """token -> when its workspace's members were first listed (a nudge tick's discovery)."""
    first: dict[str, float] = {}
    for call in http.get(f"{fake_url}/calls/users.list").json():
        first.setdefault(str(call["token"]), float(call["at"]))
    return first


def wait_for_nudges(fake_url: str, token_of: Callable[[int], str], count: int,
                    started: float, patience: float = 2 * GOAL_SECONDS) -> float:
    """Seconds from `started` (time.monotonic() when the server answered) to the last of the
    `count` nudges; inf when some had not come `patience` s after it, or came with another
    workspace's token."""
    with httpx.Client() as http:
        while True:
            arrived, wrong = nudges_in(http, fake_url, token_of, count)
            if len(arrived) >= count or time.monotonic() - started > patience:
                break
            time.sleep(0.5)
        discovered = first_discovery(http, fake_url)
    gaps = [at - discovered[token_of(index)] for index, at in arrived.items()
            if token_of(index) in discovered]
    note(f"{FIGURE}: {len(arrived)} of {count} staff nudges, each with its own workspace's "
         f"token; {wrong} with another's; from a workspace's discovery to its nudge at most "
         f"{max(gaps, default=float('nan')):.2f} s")
    if len(arrived) < count or wrong:
        return float("inf")
    return max(arrived.values()) - started


def goal_note(count: int, many: float, one: float) -> None:
    met = "met" if many <= GOAL_SECONDS else "NOT met"
    note(f"{FIGURE}: the last of {count} nudges {many:.1f} s after the start (1 workspace: "
         f"{one:.1f} s); goal every one within 2 nudge intervals and "
         f"{TICK_ALLOWANCE_SECONDS:.0f} s ({GOAL_SECONDS:.0f} s): {met}")
