"""`/time` and `/timesheet submit|status` through the running Slack app: signed requests to
/slack/events, answers through the fake Slack's response_url, records checked via GraphQL."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from bot.slack.time_commands import EDIT, EDIT_VIEW, UNDO
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.signing import SlackRequests
from tests.service.access_support import link
from tests.support import LiveServer, Member, new_org, start_live_server, stop_live_server
from tests.timebot.timeentry_setup import (
    NOW_MS,
    Fixture,
    add_employee,
    build,
    records_of,
    require_approval,
)

SECRET = "slack-signing-secret"
HOUR = 3_600_000
_users = itertools.count(1)


@dataclass
class World:
    live: LiveServer
    fake: FakeSlack
    slack: SlackRequests
    fx: Fixture

    async def user(self, name: str, tz: str = "Europe/Berlin") -> tuple[str, Member]:
        member = await add_employee(self.fx, name)
        user_id = f"U{next(_users):04d}"
        self.fake.add_user(user_id, member.email, name=name, tz=tz)
        return user_id, member

    async def run(self, command: str, text: str, user: str) -> dict[str, Any]:
        before = len(self.fake.calls_to("response_url"))
        response = await self.slack.command(command, text, user=user)
        assert response.status_code == 200, response.text
        calls = await self.fake.wait_for("response_url", count=before + 1)
        return calls[before].args

    async def press(self, action_id: str, value: str, user: str) -> dict[str, Any]:
        before = len(self.fake.calls_to("response_url"))
        response = await self.slack.action(user=user, action_id=action_id, value=value)
        assert response.status_code == 200, response.text
        calls = await self.fake.wait_for("response_url", count=before + 1)
        return calls[before].args


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[World]:
    fake = await FakeSlack.start()
    live = await start_live_server(
        request.param, tmp_path_factory.mktemp(f"slack-time-{request.param}"),
        extra_env={"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": SECRET,
                   "TIMEBOT_SLACK_API_URL": fake.api_url},
    )
    http = httpx.AsyncClient(timeout=30)
    try:
        org = await new_org(live, http)
        fx = await build(org)
        slack = SlackRequests(http, f"{live.base_url}/slack/events", SECRET, fake)
        yield World(live, fake, slack, fx)
    finally:
        await http.aclose()
        await stop_live_server(live)
        await fake.stop()


def buttons(answer: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = answer.get("blocks") or []
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    return [e for b in blocks if b.get("type") == "actions" for e in b["elements"]]


async def test_log_undo_and_pick_a_candidate(world: World) -> None:
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Sam Slack")
    answer = await world.run("/time", "2h30 @acme/web fixing the header; 1h @alp", user)
    assert answer["response_type"] == "ephemeral"
    assert answer["text"].splitlines()[0] == (
        "Logged: 2h 30m on Wed 18 Mar 2026 · @Acme/Website · “fixing the header”")
    found = buttons(answer)
    undo = next(b for b in found if b["action_id"] == UNDO)
    assert next(b for b in found if b["action_id"] == EDIT)["value"] == undo["value"]
    picks = [b for b in found if b["action_id"].startswith("timebot_time_pick")]
    assert [b["text"]["text"] for b in picks] == ["Alpha", "Alps"]
    records = await records_of(world.fx.org, member.id)
    assert [r["duration"] for r in records] == [150 * 60_000]
    assert records[0]["projects"][0]["id"] == world.fx.ids["website"]

    picked = await world.press(picks[1]["action_id"], picks[1]["value"], user)
    assert picked["text"].startswith("Logged: 1h on Wed 18 Mar 2026 · @Alps")
    assert len(await records_of(world.fx.org, member.id)) == 2

    undone = await world.press(UNDO, undo["value"], user)
    assert undone["text"].startswith("Undone: 2h 30m on Wed 18 Mar 2026 · Website")
    records = await records_of(world.fx.org, member.id)
    assert [r["projects"][0]["id"] for r in records] == [world.fx.ids["alps"]]
    assert (await world.run("/time", "undo", user))["text"].startswith("Undone: 1h")
    assert await records_of(world.fx.org, member.id) == []


async def test_list_edit_delete_week_and_submit(world: World) -> None:
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Lee List", tz="America/New_York")
    await world.run("/time", "1h @beta monday; 2h @acme tuesday; 3h @alpha #wfh", user)
    listing = (await world.run("/time", "list", user))["text"]
    assert "1. 3h on Wed 18 Mar 2026 · Alpha · wfh" in listing
    assert "3. 1h on Mon 16 Mar 2026 · Beta" in listing
    edited = await world.run("/time", "edit 3 1h30 @beta monday “standup”", user)
    assert "→ 1h 30m on Mon 16 Mar 2026 · @Beta · “standup”" in edited["text"]
    deleted = await world.run("/time", "delete 2", user)
    assert deleted["text"].startswith("Deleted: 2h on Tue 17 Mar 2026 · Acme")
    records = await records_of(world.fx.org, member.id)
    assert sorted(r["duration"] for r in records) == [90 * 60_000, 3 * HOUR]
    beta = next(r for r in records if r["duration"] == 90 * 60_000)
    assert beta["comment"] == "standup"
    # Monday 00:00 in New York (the Slack time zone), not in the person's service zone
    assert beta["startTime"]["ts"] == NOW_MS - 2 * 86_400_000 - 15 * HOUR + 4 * HOUR

    week = (await world.run("/time", "week", user))["text"]
    assert week.splitlines()[0] == "Week of Mon 16 Mar 2026: 4h 30m · timesheet draft (not" \
        " submitted)"
    assert "  Beta: 1h 30m" in week
    await require_approval(world.fx.org)
    submitted = await world.run("/timesheet", "submit", user)
    assert submitted["text"].startswith("Timesheet for the week of Mon 16 Mar 2026")
    status = (await world.run("/timesheet", "status", user))["text"]
    assert "This week" in status and "submitted, awaiting approval" in status
    refused = await world.run("/time", "1h @acme", user)
    assert "submitted for approval and locked for its owner." in refused["text"]
    assert len(await records_of(world.fx.org, member.id)) == 2


async def test_edit_button_opens_a_modal_that_replaces_the_entry(world: World) -> None:
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Eve Edit")
    answer = await world.run("/time", "2h @beta “draft”", user)
    record_id = next(b for b in buttons(answer) if b["action_id"] == EDIT)["value"]
    before = len(world.fake.calls_to("views.open"))
    response = await world.slack.action(user=user, action_id=EDIT, value=record_id)
    assert response.status_code == 200
    view = (await world.fake.wait_for("views.open", count=before + 1))[before].args["view"]
    if isinstance(view, str):
        view = json.loads(view)
    assert view["callback_id"] == EDIT_VIEW and view["private_metadata"] == record_id
    initial = view["blocks"][0]["element"]["initial_value"]
    assert initial == "2h on Wed 18 Mar 2026 @Beta “draft”"
    response = await world.slack.view_submission(
        user=user, callback_id=EDIT_VIEW, private_metadata=record_id,
        values={"entry": {"value": {"type": "plain_text_input",
                                    "value": "3h @acme “final”"}}},
    )
    assert response.status_code == 200, response.text
    records = await records_of(world.fx.org, member.id)
    assert [(r["duration"], r["comment"]) for r in records] == [(3 * HOUR, "final")]


async def test_help_and_parse_errors(world: World) -> None:
    user, member = await world.user("Hal Help")
    assert "/time list" in (await world.run("/time", "help", user))["text"]
    answer = await world.run("/time", "2x @acme", user)
    assert answer["text"].startswith("Not understood, nothing logged:")
    assert await records_of(world.fx.org, member.id) == []


# 2026-01-01 and 2027-01-01, 00:00 in Berlin
BERLIN_2026 = 1_767_222_000_000
BERLIN_2027 = 1_798_758_000_000
ADD_ALLOWANCE = """mutation($p: SvcId!, $a: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
  addPersonAbsenceQuota(personId: $p, absenceId: $a, startTime: $s, endTime: $e, available: 2)
  { id } }"""


async def test_logging_time_off_shows_what_is_left(world: World) -> None:
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Tia Timeoff")
    await world.fx.org.admin.gql(ADD_ALLOWANCE, {"p": member.id, "a": world.fx.ids["vacation"],
                                                 "s": BERLIN_2026, "e": BERLIN_2027})
    first = await world.run("/time", "1d vacation monday", user)
    assert first["text"].startswith("Logged: 1d on Mon 16 Mar 2026 · Vacation")
    assert first["text"].endswith(" — Vacation left: 1 day (until 31 Dec 2026)")
    second = await world.run("/time", "1d vacation tuesday", user)
    assert second["text"].endswith(" — Vacation left: 0 days (until 31 Dec 2026)")
    refused = await world.run("/time", "1d vacation friday", user)
    assert refused["text"].startswith("Not logged: 1d vacation friday — Not enough time off left")
    assert "Vacation allowance 2026-01-01 to 2026-12-31" in refused["text"]
    sick = await world.run("/time", "1d sick leave wednesday", user)
    assert sick["text"].startswith("Logged: ") and " left:" not in sick["text"]
    assert len(await records_of(world.fx.org, member.id)) == 3


async def test_time_offers_only_what_the_person_may_use(world: World) -> None:
    """A project the person may not use is not offered; one offered to an admin who may not
    use it is refused by the service with a message naming it, and nothing is logged."""
    world.live.clock.set(NOW_MS)
    org, ids = world.fx.org, world.fx.ids
    user, member = await world.user("Ann Access")
    # Shown by default: the "Who has access?" list excludes Ann from Beta.
    await link(org, "assignProjectToPerson", "personId", member.id, "projectId", ids["beta"])
    answer = await world.run("/time", "1h @beta", user)
    assert "is no project or task you may log time on" in answer["text"], answer["text"]
    assert (await world.run("/time", "1h @alpha", user))["text"].startswith("Logged: 1h")
    assert [r["projects"][0]["id"] for r in await records_of(org, member.id)] == [ids["alpha"]]

    admin_user = "UADMIN1"
    world.fake.add_user(admin_user, org.admin.email, name="Ada Admin", tz="Europe/Berlin")
    await link(org, "assignProjectToPerson", "personId", org.admin.id, "projectId", ids["alps"])
    try:
        refused = await world.run("/time", "1h @alps", admin_user)
        assert "Ada Admin has no access to the project Alps" in refused["text"], refused["text"]
        assert await records_of(org, org.admin.id) == []
    finally:
        await link(org, "unassignProjectFromPerson", "personId", org.admin.id, "projectId",
                   ids["alps"])


async def test_an_entry_with_slack_markup_is_shown_as_typed(world: World) -> None:
    """A description is data: `<!channel>` or a disguised link in it is escaped in the answer
    and its blocks, in `/time list`, and in the usage lines (`<n>`)."""
    world.live.clock.set(NOW_MS)
    user, _member = await world.user("Mal Markup")
    answer = await world.run("/time", "1h @acme/web <!channel> <https://evil|click> & co", user)
    listing = await world.run("/time", "list", user)
    for shown in (answer, listing):
        dumped = json.dumps(shown, ensure_ascii=False)
        assert "&lt;!channel&gt; &lt;https://evil|click&gt; &amp; co" in dumped
        assert "<!channel>" not in dumped and "<https://evil|click>" not in dumped
    assert "`/time edit &lt;n&gt; &lt;entry&gt;`" in listing["text"]


async def test_a_settings_refusal_reaches_the_person(world: World) -> None:
    """The service's entry rules (issue #24) refuse through /time with the setting named."""
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Lou Locked")
    admin = world.fx.org.admin.gql
    await admin("mutation($id: SvcId!, $v: SvcTimestamp) { editPersonTimeSettingsLockDate("
                "id: $id, lockDate: $v) { id } }", {"id": member.id, "v": NOW_MS - 39 * HOUR})
    refused = await world.run("/time", "2h @acme/web monday", user)
    # The front knows the person's rules and refuses before the mutation (the service's own
    # refusal, relayed when a rule is not known to the front, is the mandatoryTimer's below).
    assert refused["text"].startswith("Not logged: 2h @acme/web monday — Entries before Tue 17 "
                                      "Mar 2026 are locked (lockDate): log time on Tue 17 Mar "
                                      "2026 or later."), refused["text"]
    assert (await world.run("/time", "2h @acme/web", user))["text"].startswith("Logged: 2h")
    await admin("mutation($id: SvcId!) { editPersonTimeSettingsMandatoryTimer(id: $id,"
                " mandatoryTimer: true) { id } }", {"id": member.id})
    refused = await world.run("/time", "1h @acme/web", user)
    assert "record time with the timer only (mandatoryTimer of person Lou Locked)" in \
        refused["text"]
    assert len(await records_of(world.fx.org, member.id)) == 1


async def test_control_characters_in_a_command_are_answered(world: World) -> None:
    """NUL, escape and bidi characters in `/time` and `/timesheet`: each is answered (what
    could be logged is, the rest is named), never an error of ours (PostgreSQL refuses NUL in
    text)."""
    world.live.clock.set(NOW_MS)
    user, member = await world.user("Nul Null")
    for text in ("2h @acme/web fix\x00ing \x1b[31m\u202e", "\x00", "2h\x00 @acme/web",
                 "list \x00", "\x00undo"):
        answer = await world.run("/time", text, user)
        assert answer["text"] and "went wrong" not in answer["text"].lower(), (text, answer)
    for text in ("status \x00", "\x00submit", "submit\x00"):
        answer = await world.run("/timesheet", text, user)
        assert answer["text"] and "went wrong" not in answer["text"].lower(), (text, answer)
    assert all("\x00" not in (r.get("comment") or "")
               for r in await records_of(world.fx.org, member.id))
