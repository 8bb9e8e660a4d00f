"""The rules that shape time entry, as `/time` honours them through the running Slack app: a
monthly team's "this period" is its month (week, submit, status, the Home tab), an entry the
person's rules refuse is answered before the service is asked, with the setting's name and
what would be accepted, durations are shown as `durationFormat` says, and a refusal the front
did not foresee is the service's own words."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from tests.bot.slack.test_time_commands import World, world  # noqa: F401  (the module's server)
from tests.mail.reviews_support import org_events, settings_seen
from tests.timebot.timeentry_setup import NOW_MS, records_of

BERLIN = ZoneInfo("Europe/Berlin")
TEN_MARCH = int(datetime(2026, 3, 10, tzinfo=BERLIN).timestamp() * 1000)
SEVENTEEN_MARCH = int(datetime(2026, 3, 17, tzinfo=BERLIN).timestamp() * 1000)


async def test_a_monthly_team_sees_and_submits_its_month(world: World) -> None:  # noqa: F811
    world.live.clock.set(NOW_MS)  # Wednesday 18 March 2026
    user, member = await world.user("Mo Monthly")
    gql = world.fx.org.admin.gql
    tag = (await gql('mutation { addTag(name: "Monthly team") { id } }'))["addTag"]["id"]
    await gql("mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p) { id }"
              " editTagTimeSettingsPeriodicity(id: $t, periodicity: \"monthly\") { id } }",
              {"t": tag, "p": member.id})
    await world.run("/time", "2h @acme monday setup", user)
    week = (await world.run("/time", "week", user))["text"]
    assert week.splitlines()[0] == ("Month of Sun 1 Mar 2026: 2h · timesheet draft "
                                    "(not submitted)"), week
    status = (await world.run("/timesheet", "status", user))["text"]
    assert "This month (Sun 1 Mar 2026 to Tue 31 Mar 2026): draft" in status, status
    assert "Last month (Sun 1 Feb 2026 to Sat 28 Feb 2026)" in status, status
    # The Home tab shows the month, its days in her zone.
    response = await world.slack.event({"type": "app_home_opened", "user": user, "tab": "home",
                                        "channel": "D" + user[1:]})
    assert response.status_code == 200, response.text
    home = (await world.fake.wait_for("views.publish", user_id=user))[0].args["view"]
    assert home["blocks"][0]["text"]["text"] == "This month (Sun 01 Mar - Tue 31 Mar 2026)"
    text = "\n".join(str((b.get("text") or {}).get("text", "")) for b in home["blocks"])
    assert "Sun 01 Mar: 0h" in text and "Mon 16 Mar: 2h" in text and "Tue 31 Mar: 0h" in text
    submitted = (await world.run("/timesheet", "submit", user))["text"]
    assert submitted == ("Timesheet for the month of Sun 1 Mar 2026 to Tue 31 Mar 2026 "
                         "submitted and approved (no approval workflow applies)."), submitted


async def test_time_refuses_early_and_says_why(world: World) -> None:  # noqa: F811
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Rita Rules")
    gql = world.fx.org.admin.gql
    await gql("mutation($id: SvcId!, $l: SvcTimestamp) { editPersonTimeSettingsLockDate("
              "id: $id, lockDate: $l) { id } editPersonTimeSettingsForceComment(id: $id,"
              " forceComment: true) { id } editPersonTimeSettingsDurationFormat(id: $id,"
              " durationFormat: 0) { id } }", {"id": member.id, "l": TEN_MARCH})
    locked = (await world.run("/time", "1h @acme 2026-03-02 design review", user))["text"]
    assert ("Entries before Tue 10 Mar 2026 are locked (lockDate): log time on Tue 10 Mar "
            "2026 or later.") in locked, locked
    bare = (await world.run("/time", "1h @acme", user))["text"]
    assert ("A comment is required (forceComment): say what you did after the entry, e.g. "
            "/time 2h @acme what you did") in bare, bare
    assert await records_of(world.fx.org, member.id) == []
    logged = (await world.run("/time", "1h @acme design review", user))["text"]
    assert "Logged" in logged, logged
    # durationFormat 0 (h:mm) where it is set; elsewhere the fronts' `1h`.
    listing = (await world.run("/time", "list", user))["text"]
    assert "1. 1:00 on Wed 18 Mar 2026 · Acme" in listing, listing
    # A rule set after the front read the person's rules: the service's settingsUpdate makes
    # the front read them again, and it refuses at once (the clock stands: no expiry).
    runtime = world.live.app.state.runtime
    await runtime.subscriptions.ensure(world.fx.org.id)
    seen = len([e for e in await org_events(runtime, world.fx.org.id)
                if e.event == "settingsUpdate"])
    await gql("mutation($id: SvcId!, $l: SvcTimestamp) { editPersonTimeSettingsLockDate("
              "id: $id, lockDate: $l) { id } editPersonTimeSettingsMinimumTimeEntry(id: $id,"
              " minimumTimeEntry: 1800000) { id } }", {"id": member.id, "l": SEVENTEEN_MARCH})
    await settings_seen(runtime, world.fx.org.id, seen + 2)
    locked = (await world.run("/time", "1h @acme monday design review", user))["text"]
    assert ("Entries before Tue 17 Mar 2026 are locked (lockDate): log time on Tue 17 Mar "
            "2026 or later.") in locked, locked
    short = (await world.run("/time", "10m @acme call", user))["text"]
    assert ("Entries shorter than 0:30 are not accepted (minimumTimeEntry): log at least "
            "0:30.") in short, short
    assert len(await records_of(world.fx.org, member.id)) == 1
