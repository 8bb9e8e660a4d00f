"""Issue 28, someone who may decide is asked: the scheduler's escalation pass
(timebot.notify.escalation_tick) over timesheets submitted through GraphQL, with the facts of
absence the service records (time off over GraphQL) and timebot's own (auto-replies, Slack
statuses); the administrators asked one working day after the stage began to wait when no
other approver is there, the managers when a stage waited twice the approval-reminder
interval; each once, with the reason in the mail, the Journal told once. The virtual clock
(`live.clock`), no waiting. SQLite and PostgreSQL (`org`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime

import pytest
import structlog

from mail.outbound.reminder_preview import approval_reminder_lines, escalation_lines
from plumbing.db import unit_of_work
from service.demo import DEMO_MARKER, find_demo_organisation, seed_demo
from service.models import Organisation
from tests.mail.outbound.test_templates_notify import NOTIFY, settings
from tests.mail.reviews_support import (
    APPROVE,
    add_record,
    component,
    jobs,
    mails,
    parse,
    runtime_of,
    set_stages,
    settle,
    submit,
    text_part,
)
from tests.support import DAY_MS, HOUR_MS, LiveServer, Member, Org, mail_of
from timebot.notify.away_facts import service_absences, slack_status_away
from timebot.notify.escalation_tick import AWAY, CLIMB, ESCALATION, Escalator
from timebot.notify.escalations import StageWait, add_working_days, escalation, escalation_key
from timebot.process.notifications import jobs_of
from timebot.process.runtime import Runtime
from timebot.state.away import Absence, record_absence

# Monday 30 November 2026, 10:00 UTC.
MONDAY_10 = int(datetime(2026, 11, 30, 10, tzinfo=UTC).timestamp() * 1000)
MONDAY = MONDAY_10 - 10 * HOUR_MS
JOURNAL = ("query($r: SvcReferenceInput!) { getMessages(of: $r) { content } }")


async def time_off(org: Org, person: Member, *days: int) -> None:
    """Vacation recorded in the service on these days after MONDAY (as anyone records it)."""
    kind = (await org.admin.gql('mutation { addAbsenceType(name: "Vacation") { id } }'))[
        "addAbsenceType"]["id"]
    for day in days:
        await org.admin.gql(
            "mutation($s: SvcTimestamp!, $p: SvcId!, $a: SvcId) { addTimeRecord(startTime: $s,"
            " duration: 28800000, personId: $p, absenceId: $a) { id } }",
            {"s": MONDAY + day * DAY_MS + 9 * HOUR_MS, "p": person.id, "a": kind})


async def journal(org: Org, submit_id: str) -> list[str]:
    messages = (await org.admin.gql(JOURNAL, {"r": {"id": submit_id, "type": "approvalEvent"}})
                )["getMessages"]
    return [m["content"] for m in messages if "timebot asked" in m["content"]]


async def review_texts(org: Org, member: Member) -> list[str]:
    return [text_part(m) for m in await mails(runtime_of(org), member, "review")]


async def submitted(org: Org, owner: Member) -> str:
    runtime = runtime_of(org)
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner)
    sheet = await submit(owner)
    await settle(runtime, org.id, 1)
    return str(sheet["submitId"])


async def test_time_off_asks_the_administrators_after_one_working_day_once(org: Org) -> None:
    org.live.clock.set(MONDAY_10 + 4 * DAY_MS)  # Friday 4 December, 10:00
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    await set_stages(org, (grace,))
    await time_off(org, grace, 4, 7, 8)  # Friday, then Monday and Tuesday
    submit_id = await submitted(org, owner)
    escalator = jobs(org).escalator
    [plan] = [p for p in await escalator.plans(org.id) if p.kind == ESCALATION]
    # one working day after Friday 10:00: Monday 10:00 (the weekend does not count)
    assert plan.due_ms == MONDAY_10 + 7 * DAY_MS
    assert plan.recipients == ((org.admin.id, org.admin.name),)
    reason = "Grace Hopper is away until Tue 08 Dec 2026"
    assert plan.reason.startswith(reason)
    assert await escalator.run(org.id) == 0 and await review_texts(org, org.admin) == []
    # the organisation's delay, in working days (null: the default, one)
    for days, due in ((2, MONDAY_10 + 8 * DAY_MS), (None, MONDAY_10 + 7 * DAY_MS)):
        await org.admin.gql("mutation($d: Int) { editOrganisationTimeSettings"
                            "ApprovalEscalationDelay(approvalEscalationDelay: $d) { id } }",
                            {"d": days})
        assert [p.due_ms for p in await escalator.plans(org.id)] == [due]
    # the working days are the schedule's: a holiday of Olive's on Monday moves it to Tuesday
    added = await org.admin.gql(
        "mutation($p: SvcId!, $d: SvcTimestamp!) { addPersonPublicHoliday(id: $p, holiday: "
        '{name: "Mine", date: $d, disabled: false}) { publicHolidays { value { '
        "holidays(year: 2026) { id name } } } } }", {"p": owner.id, "d": MONDAY + 7 * DAY_MS})
    [mine] = [h["id"] for h in added["addPersonPublicHoliday"]["publicHolidays"]["value"][
        "holidays"] if h["name"] == "Mine"]
    assert [p.due_ms for p in await escalator.plans(org.id)] == [MONDAY_10 + 8 * DAY_MS]
    await org.admin.gql("mutation($p: SvcId!, $h: SvcId!) { removePersonPublicHoliday(id: $p,"
                        " holidayId: $h) { id } }", {"p": owner.id, "h": mine})
    assert [p.due_ms for p in await escalator.plans(org.id)] == [MONDAY_10 + 7 * DAY_MS]

    org.live.clock.set(MONDAY_10 + 7 * DAY_MS)
    # two processes' passes at the same instant: one ask, one Journal message (the claim)
    other = Escalator(escalator.runtime, escalator.reviews)
    assert sum(await asyncio.gather(escalator.run(org.id), other.run(org.id))) == 1
    [asked] = await review_texts(org, org.admin)
    assert f"{reason}, and no other approver of this stage can decide" in asked
    [note] = await journal(org, submit_id)
    assert note.startswith("Stage 1: timebot asked the administrators (") and reason in note
    # the next tick, a second process: nothing twice
    assert await escalator.run(org.id) == 0 and await escalator.run(org.id) == 0
    assert len(await review_texts(org, org.admin)) == 1 and len(await journal(org, submit_id)) == 1
    [grace_line] = await approval_reminder_lines(component(org).ctx, org.id)
    assert grace_line.verdict.endswith("; away until Tue 08 Dec 2026 (time-off)"), grace_line
    lines = await escalation_lines(component(org).ctx, org.id)
    assert [(line.kind, line.verdict.split(":")[0]) for line in lines] == [("escalation", "sent")]

    # The administrator decides (the service lets them); nothing is asked any more.
    await org.admin.gql(APPROVE, {"id": submit_id})
    assert await escalator.plans(org.id) == []


async def test_others_asked_when_an_absence_begins_later_admins_when_all_are_away(
    org: Org
) -> None:
    org.live.clock.set(MONDAY_10)
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    hal = await org.add_member("Hal Abelson", "manager")
    await set_stages(org, (grace, hal))
    await submitted(org, owner)
    assert len(await review_texts(org, hal)) == 1
    escalator = jobs(org).escalator
    assert await escalator.plans(org.id) == []

    # Grace's time off on Tuesday (recorded after the submission): Hal is asked, with why.
    await time_off(org, grace, 1)
    org.live.clock.set(MONDAY_10 + DAY_MS - HOUR_MS)
    assert [p.kind for p in await escalator.plans(org.id)] == [AWAY]
    await escalator.run(org.id)
    _, second = await review_texts(org, hal)
    assert "Grace Hopper is away until Tue 01 Dec 2026: you are asked too" in second
    await escalator.run(org.id)
    assert len(await review_texts(org, hal)) == 2

    # Hal's Slack status says he is away too: nobody of the stage is there; since Monday
    # 10:00 plus one working day has passed, the administrators are asked at once.
    away, until = slack_status_away("Vacationing", ":palm_tree:", None, date(2026, 12, 1))
    assert away and until is None
    await record_absence(runtime_of(org).state_sessions, organisation_id=org.id,
                         approver_id=hal.id, until=until, seen_ms=org.live.clock.now_ms(),
                         message_key="slack:U1", source="slack-status")
    org.live.clock.set(MONDAY_10 + DAY_MS)
    [plan] = [p for p in await escalator.plans(org.id) if p.kind == ESCALATION]
    assert plan.due_ms == MONDAY_10 + DAY_MS
    assert await escalator.run(org.id) == 1
    [asked] = await review_texts(org, org.admin)
    assert "Grace Hopper is away until Tue 01 Dec 2026; Hal Abelson is away (return date " \
        "unknown)" in asked

    # Grace is back on Wednesday: the stage has someone again; the administrators are not
    # asked again, Grace is (Hal is still away).
    org.live.clock.set(MONDAY_10 + 2 * DAY_MS)
    assert [p.kind for p in await escalator.plans(org.id)] == [AWAY]
    await escalator.run(org.id)
    assert len(await review_texts(org, org.admin)) == 1
    _, again = await review_texts(org, grace)
    assert "Hal Abelson is away (return date unknown): you are asked too" in again


async def test_the_others_are_asked_while_the_clock_moves(
    org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real clock moves while the pass reads its plans: an AWAY plan made then is still
    carried out (each read of this clock is a millisecond later than the one before)."""
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    hal = await org.add_member("Hal Abelson", "manager")
    await set_stages(org, (grace, hal))
    org.live.clock.set(MONDAY_10)
    await submitted(org, owner)
    await time_off(org, grace, 1)
    clock = org.live.clock
    clock.set(MONDAY_10 + DAY_MS - HOUR_MS)

    def ticking() -> int:
        assert clock.frozen_ms is not None
        clock.frozen_ms += 1
        return clock.frozen_ms

    monkeypatch.setattr(clock, "now_ms", ticking)
    await jobs(org).escalator.run(org.id)
    monkeypatch.undo()
    _, second = await review_texts(org, hal)
    assert "Grace Hopper is away until Tue 01 Dec 2026: you are asked too" in second


async def test_a_stage_waiting_twice_the_reminder_interval_climbs_to_the_manager(
    org: Org
) -> None:
    org.live.clock.set(MONDAY_10)
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    mona = await org.add_member("Mona Manager", "manager")
    await org.admin.gql("mutation($m: SvcId!, $p: SvcId!) { makeManagerOfPerson(managerId: $m,"
                        " personId: $p) { id } }", {"m": mona.id, "p": grace.id})
    await org.admin.gql(
        "mutation { editOrganisationTimeSettingsApprovalReminder(approvalReminder: 2) { id } }")
    await set_stages(org, (grace,))
    escalator = jobs(org).escalator
    assert await escalator.tick(org.id) == 0  # nothing waits: looked at again IDLE_S later
    await submitted(org, owner)
    [plan] = await escalator.plans(org.id)
    assert (plan.kind, plan.due_ms, plan.recipients) == (
        CLIMB, MONDAY_10 + 4 * DAY_MS, ((mona.id, mona.name),))
    org.live.clock.set(MONDAY_10 + 4 * DAY_MS - 1)
    assert await escalator.run(org.id) == 0
    org.live.clock.set(MONDAY_10 + 4 * DAY_MS)
    assert await escalator.tick(org.id) == 0  # (idle: the scheduler's pass waits)
    escalator._idle.clear()  # IDLE_S later
    assert await escalator.tick(org.id) == 1
    [climbed] = await review_texts(org, mona)
    assert "Grace Hopper has not decided Olive Owner's timesheet for " in climbed
    assert "since Mon 30 Nov 2026." in climbed
    assert "You can remind Grace Hopper to decide it, or ask an administrator (" in climbed
    [sent] = await mails(runtime_of(org), mona, "review")
    # not a review request: a manager who is no approver gets no way to decide
    assert "/a/" not in climbed and "/r/" not in climbed and sent["Reply-To"] is None
    assert "waits for Grace Hopper" in str(sent["Subject"])
    assert await escalator.run(org.id) == 0 and len(await review_texts(org, mona)) == 1
    assert await review_texts(org, org.admin) == []  # she has a manager: not the admins
    [line] = await escalation_lines(component(org).ctx, org.id)
    assert (line.kind, line.to) == ("climbing reminder", "Mona Manager")
    assert line.verdict.startswith("sent: Grace Hopper has not decided")

    # Mona no longer manages Grace: the administrators are told, and one may decide: the
    # Approve / Reject links and a reply address, which works.
    await org.admin.gql("mutation($m: SvcId!, $p: SvcId!) { removeManagerOfPerson(managerId: "
                        "$m, personId: $p) { id } }", {"m": mona.id, "p": grace.id})
    assert await escalator.run(org.id) == 1
    [admin_mail] = await mails(runtime_of(org), org.admin, "review")
    told = text_part(admin_mail)
    assert "Grace Hopper has not decided Olive Owner's timesheet" in told
    assert "As an administrator you may decide it yourself" in told
    approve = next(line for line in told.splitlines() if line.startswith("Approve: "))
    assert "/a/" in approve and admin_mail["Reply-To"] is not None
    assert await escalator.run(org.id) == 0


def test_the_decisions_are_pure() -> None:
    friday = int(datetime(2026, 12, 4, 10, tzinfo=UTC).timestamp() * 1000)
    saturday = friday + DAY_MS
    assert add_working_days(friday, 1) == friday + 3 * DAY_MS  # Monday 10:00
    assert add_working_days(saturday, 1) == friday + 4 * DAY_MS - 10 * HOUR_MS  # Tue 00:00
    assert add_working_days(friday, 1, {date(2026, 12, 7): False}) == friday + 4 * DAY_MS
    assert add_working_days(friday, 0) == friday
    # Slack statuses
    today = date(2026, 12, 1)
    eve = int(datetime(2026, 12, 4, tzinfo=UTC).timestamp())
    assert slack_status_away("Out of office", "", eve, today) == (True, date(2026, 12, 3))
    assert slack_status_away("", ":palm_tree:", eve + 3600, today) == (True, date(2026, 12, 4))
    assert slack_status_away("In a meeting", ":calendar:", None, today) == (False, None)
    assert slack_status_away("Working away at it", "", None, today) == (False, None)
    assert slack_status_away("En vacances", "", None, today) == (True, None)
    assert slack_status_away("OOO", "", eve - 5 * 86_400, today) == (False, None)  # expired
    # dated in the person's zone: New York's midnight (05:00 UTC) ends the day before there;
    # Berlin's midnight (23:00 UTC the evening before) too
    ny_midnight = int(datetime(2026, 12, 4, 5, tzinfo=UTC).timestamp())
    assert slack_status_away("OOO", "", ny_midnight, today, "America/New_York") == (
        True, date(2026, 12, 3))
    assert slack_status_away("OOO", "", ny_midnight, today) == (True, date(2026, 12, 4))
    berlin_midnight = int(datetime(2026, 12, 3, 23, tzinfo=UTC).timestamp())
    assert slack_status_away("OOO", "", berlin_midnight, today, "Europe/Berlin") == (
        True, date(2026, 12, 3))
    assert slack_status_away("OOO", "", eve, today, "No/Such_Zone") == (True, date(2026, 12, 3))
    # The service's facts: time off runs on over the weekend; a holiday on a weekday counts.
    planned = {date(2026, 12, 5): False, date(2026, 12, 6): False, date(2026, 12, 8): False}
    [off] = service_absences("o", "g", {date(2026, 12, 4), date(2026, 12, 7)}, planned,
                             date(2026, 12, 4), 0)
    assert (off.source, off.until) == ("time-off", date(2026, 12, 8))
    [holiday] = service_absences("o", "g", set(), planned, date(2026, 12, 8), 0)
    assert (holiday.source, holiday.until) == ("schedule", date(2026, 12, 8))
    assert service_absences("o", "g", set(), planned, date(2026, 12, 5), 0) == []  # Saturday
    # escalation: only when nobody of the stage is there (quorum any), or one is away (all)
    now = friday
    wait = StageWait("s", 0, "o", "Olive", friday - DAY_MS, (("g", "Grace"), ("h", "Hal")),
                     "any")
    grace_away = {"g": [Absence("o", "g", "time-off", date(2026, 12, 8), now)]}
    assert escalation(wait, grace_away, 1, now) is None
    both = {**grace_away, "h": [Absence("o", "h", "auto-reply", None, now)]}
    found = escalation(wait, both, 1, now)
    assert found is not None and found.due_ms == friday
    every = StageWait("s", 0, "o", "Olive", friday - DAY_MS, wait.pending, "all")
    assert escalation(every, grace_away, 2, now) is not None
    assert escalation(every, {}, 1, now) is None


def test_how_long_a_timesheet_waits_for_an_away_approver() -> None:
    """The closing note's figure: a stage whose only approver is away, submitted at every
    minute of a week; the scheduler ticks every 60 s (its default); the administrators are
    asked at the first tick at or after the default delay of one working day."""
    tick_ms = 60_000
    monday = int(datetime(2026, 11, 30, tzinfo=UTC).timestamp() * 1000)
    waits = []
    for entered in range(monday + 7_000, monday + 7 * DAY_MS, tick_ms):
        due = add_working_days(entered, 1)
        first_tick = -(-(due - monday) // tick_ms) * tick_ms + monday  # ticks on the minute
        waits.append(first_tick - entered)
    weekday = [w for i, w in enumerate(waits) if i < 4 * 24 * 60]  # Monday to Thursday
    assert max(weekday) <= DAY_MS + tick_ms and min(weekday) >= DAY_MS
    assert max(waits) <= 3 * DAY_MS + tick_ms  # Friday: asked on Monday, same time


@asynccontextmanager
async def fresh_demo(live: LiveServer, now_ms: int) -> AsyncIterator[str]:
    """The demo seeded anew at `now_ms` on the live server's clock (a demo seeded before by
    another test is set aside meanwhile, then given back, with the clock)."""
    clock = (live.clock.frozen_ms, live.clock.offset_ms)
    async with unit_of_work(live.service.sessions) as session:
        earlier = await find_demo_organisation(session)
        if earlier is not None:
            earlier.settings = {k: v for k, v in (earlier.settings or {}).items()
                                if k != DEMO_MARKER}
    live.clock.set(now_ms)
    try:
        async with unit_of_work(live.service.sessions) as session:
            await seed_demo(session, now_ms)
            demo = await find_demo_organisation(session)
            assert demo is not None and demo is not earlier
            demo_id = demo.id
        yield demo_id
    finally:
        live.clock.frozen_ms, live.clock.offset_ms = clock
        async with unit_of_work(live.service.sessions) as session:
            for organisation_id, marked in ((demo_id, False), (earlier and earlier.id, True)):
                found = await session.get(Organisation, organisation_id) \
                    if organisation_id else None
                if found is not None:
                    settings = {k: v for k, v in (found.settings or {}).items()
                                if k != DEMO_MARKER}
                    found.settings = {**settings, DEMO_MARKER: True} if marked else settings


# 23:30 UTC (00:30 in Berlin, the next day) and 00:30 UTC (01:30): Grace's vacation is
# Berlin's days; it began at midnight in Berlin, 23:00 UTC the day before. A Sunday morning:
# Margaret's working days (the delay's) are Berlin's too.
@pytest.mark.parametrize("now_ms", [
    int(datetime(2026, 12, 2, 23, 30, tzinfo=UTC).timestamp() * 1000),
    int(datetime(2026, 12, 3, 0, 30, tzinfo=UTC).timestamp() * 1000),
    int(datetime(2026, 12, 6, 6, 30, tzinfo=UTC).timestamp() * 1000),
], ids=["23:30 UTC", "00:30 UTC", "Sunday 06:30 UTC"])
async def test_the_demo_shows_an_escalation(live: LiveServer, now_ms: int) -> None:
    """`timebot serve --demo`: Grace is on vacation (time off in the service) and Margaret's
    timesheet has waited for her for more than a working day: Ada, the administrator, is
    asked with the reason, and the Journal says so."""
    runtime: Runtime = live.app.state.runtime
    escalator = jobs_of(runtime).escalator
    async with fresh_demo(live, now_ms) as demo_id:
        [plan] = [p for p in await escalator.plans(demo_id) if p.kind == ESCALATION]
        assert plan.wait.owner_name == "Margaret Hamilton"
        assert [name for _, name in plan.recipients] == ["Ada Lovelace"]
        assert plan.reason.startswith("Grace Hopper is away until ")
        assert plan.due_ms <= live.clock.now_ms()
        await escalator.run(demo_id)
        keys = {escalation_key(plan.wait.submit_id, plan.wait.stage, pid)
                for pid, _ in plan.recipients}
        [asked] = [text_part(parse(r.raw)) for r in await mail_of(runtime).outbox.messages(
            "review") if r.dedupe_key in keys and "ada@northwind.example" in r.rcpt_tos]
        assert plan.reason.split(",")[0] in asked


async def test_an_ask_that_queues_nothing_is_not_logged_each_minute(org: Org) -> None:
    """#43: an administrator who turned approval mails off is asked on every pass and nothing
    is queued; the pass said `approval_escalated queued: 0` at info each minute (the demo's
    log). Now only an ask that queued something is logged at info."""
    org.live.clock.set(MONDAY_10 + 4 * DAY_MS)
    owner = await org.add_member("Olive Owner")
    grace = await org.add_member("Grace Hopper", "manager")
    await set_stages(org, (grace,))
    await time_off(org, grace, 4, 7, 8)
    await org.admin.gql(NOTIFY, {"id": org.admin.id, "n": settings(approvalUpdate="none")})
    await submitted(org, owner)
    escalator = jobs(org).escalator
    org.live.clock.set(MONDAY_10 + 7 * DAY_MS)
    with structlog.testing.capture_logs() as logs:
        assert await escalator.run(org.id) == 0 and await escalator.run(org.id) == 0
    said = [line for line in logs if line["event"] == "approval_escalated"
            and line["log_level"] != "debug"]
    assert said == [], said
    assert await review_texts(org, org.admin) == []
