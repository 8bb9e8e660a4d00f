"""The submission rules through the running Slack app (signed commands, answers through the
fake Slack's response_url): `/timesheet submit last` refused by requireScheduledTimeDaily with
the shortfall, `/time` on a project whose own turnOffPeriodAfter closed the week, and
`/timesheet status` showing last week auto-submitted in the person's own week."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from service.timesheets.autosubmit import auto_submit
from tests.bot.slack.test_time_commands import World, world  # noqa: F401  (the module's server)
from tests.mail.reviews_support import org_events, settings_seen
from tests.timebot.timeentry_setup import NOW_MS, records_of

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(day: str, hour: int = 0) -> int:
    d = date.fromisoformat(day)
    return int(datetime(d.year, d.month, d.day, hour, tzinfo=BERLIN).timestamp() * 1000)


async def test_submit_refused_short_of_the_scheduled_time(world: World) -> None:  # noqa: F811
    world.live.clock.set(NOW_MS)  # Wednesday 18 March 2026
    user, member = await world.user("Dana Daily")
    await world.fx.org.admin.gql(
        "mutation($id: SvcId!) { editPersonTimeSettingsRequireScheduledTimeDaily(id: $id,"
        " requireScheduledTimeDaily: true) { id } }", {"id": member.id})
    for day, hours in (("2026-03-09", 8), ("2026-03-10", 6), ("2026-03-11", 8),
                       ("2026-03-12", 8), ("2026-03-13", 8)):
        logged = (await world.run("/time", f"{hours}h @acme {day} work", user))["text"]
        assert "Logged" in logged, logged
    refused = (await world.run("/timesheet", "submit last", user))["text"]
    assert refused.startswith("Not submitted: "), refused
    assert ("(requireScheduledTimeDaily of person Dana Daily): Tue 10 Mar has 6h of 8h "
            "scheduled") in refused, refused
    await world.run("/time", "2h @acme 2026-03-10 more work", user)
    done = (await world.run("/timesheet", "submit last", user))["text"]
    assert "submitted" in done and "Not" not in done, done


async def test_time_on_a_project_whose_period_is_turned_off(world: World) -> None:  # noqa: F811
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Pat Project")
    await world.fx.org.admin.gql(
        "mutation($id: SvcId!) { editProjectTimeSettingsTurnOffPeriodAfter(id: $id,"
        " turnOffPeriodAfter: 1) { id } }", {"id": world.fx.ids["alps"]})
    # The front knows the project's rule (read with the person's) and refuses early.
    refused = (await world.run("/time", "1h @alps 2026-03-10 review", user))["text"]
    assert ("The week of 2026-03-09 to 2026-03-15 is closed (turnOffPeriodAfter: 1 days "
            "after it ends): log time from Mon 16 Mar 2026 on.") in refused, refused
    assert await records_of(world.fx.org, member.id) == []
    logged = (await world.run("/time", "1h @acme 2026-03-10 review", user))["text"]
    assert "Logged" in logged, logged
    # A project that keeps its periods open longer than its person's: the front lets it by,
    # and the service accepts it.
    # (The service's settingsUpdate makes the front read the rules again.)
    runtime = world.live.app.state.runtime
    await runtime.subscriptions.ensure(world.fx.org.id)
    seen = len([e for e in await org_events(runtime, world.fx.org.id)
                if e.event == "settingsUpdate"])
    await world.fx.org.admin.gql(
        "mutation($id: SvcId!, $p: SvcId!) { editPersonTimeSettingsTurnOffPeriodAfter(id: $id,"
        " turnOffPeriodAfter: 0) { id } editProjectTimeSettingsTurnOffPeriodAfter(id: $p,"
        " turnOffPeriodAfter: 30) { id } }", {"id": member.id, "p": world.fx.ids["alps"]})
    await settings_seen(runtime, world.fx.org.id, seen + 2)
    closed = (await world.run("/time", "1h @acme 2026-03-10 review", user))["text"]
    assert "(turnOffPeriodAfter: 0 days after it ends)" in closed, closed
    logged = (await world.run("/time", "1h @alps 2026-03-10 review", user))["text"]
    assert "Logged" in logged, logged
    assert len(await records_of(world.fx.org, member.id)) == 2


async def test_last_week_auto_submitted(world: World) -> None:  # noqa: F811
    # Monday, before last week is due: the live server's own sweep (on this clock) must not
    # submit it between the test's steps.
    world.live.clock.set(berlin("2026-03-16") + 12 * 3_600_000)
    user, member = await world.user("Ari Auto")
    await world.run("/time", "3h @acme 2026-03-09 setup", user)
    await world.fx.org.admin.gql(
        "mutation($id: SvcId!) { editPersonTimeSettingsAutoSubmit(id: $id, autoSubmit: 1)"
        " { id } }", {"id": member.id})
    # Due on Tuesday 17 March 00:00 in Berlin (Monday 16 March 23:00 UTC).
    assert await auto_submit(world.live.service.sessions, berlin("2026-03-17") - 1) == 0
    assert await auto_submit(world.live.service.sessions, berlin("2026-03-17")) == 1
    status = (await world.run("/timesheet", "status", user))["text"]
    assert "Last week (Mon 9 Mar 2026 to Sun 15 Mar 2026): approved" in status, status
