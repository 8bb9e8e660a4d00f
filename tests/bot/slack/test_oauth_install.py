"""Two organisations, each with its own Slack workspace installed through OAuth (#27).

One timebot with SLACK_CLIENT_ID / SLACK_CLIENT_SECRET and no SLACK_BOT_TOKEN; the fake Slack
has two teams. Each organisation's administrator signs in, clicks "Add to Slack" on /account,
and goes through /slack/install → the fake's authorize page → /slack/oauth_redirect, all over
real HTTP. Then every request is signed like Slack's, and every Web API call is checked for
the token it carried."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import yaml

from bot.slack.component import installations_of
from bot.slack.installation import NOT_CONNECTED
from bot.slack.oauth import BOT_SCOPES, STATE_COOKIE
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.harness import SIGNING_SECRET, SlackMember
from tests.bot.slack.signing import SlackRequests, command_fields, event_body
from tests.service.test_approvals_support import add_record, submit
from tests.support import LiveServer, Org, new_org, start_live_server, stop_live_server
from tests.timebot.signin_support import browser, sign_in
from timebot.state.slack_models import SlackInstallation

TEAM_A, TEAM_B, TEAM_C = "T0AAAAAAA", "T0BBBBBBB", "T0CCCCCCC"
MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack-manifest.yaml"


@dataclass
class Two:
    live: LiveServer
    fake: FakeSlack
    http: httpx.AsyncClient
    slack: SlackRequests
    a: Org
    b: Org


@asynccontextmanager
async def oauth_world(backend: str, data_dir: Path,
                      names: tuple[str, ...]) -> AsyncIterator[tuple[Two, list[Org]]]:
    """A live server with OAuth installs on a fake Slack of three teams, and one organisation
    per name, each subscribed to its webhooks (workspaces not installed yet); `Two` holds the
    first two organisations."""
    fake = await FakeSlack.start()
    for team, name in ((TEAM_A, "Acme"), (TEAM_B, "Beta"), (TEAM_C, "Corp")):
        fake.add_team(team, name)
    env = {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "client-secret",
           "SLACK_SIGNING_SECRET": SIGNING_SECRET, "TIMEBOT_SLACK_API_URL": fake.api_url}
    live = await start_live_server(backend, data_dir, extra_env=env)
    http = httpx.AsyncClient(timeout=30)
    try:
        orgs = [await new_org(live, http, name) for name in names]
        for org in orgs:
            await live.app.state.runtime.subscriptions.ensure(org.id)
        yield Two(live, fake, http, SlackRequests(http, f"{live.base_url}/slack/events",
                                                  SIGNING_SECRET, fake), orgs[0], orgs[1]), orgs
    finally:
        await stop_live_server(live)
        await fake.stop()
        await http.aclose()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def two(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Two]:
    async with oauth_world(request.param, tmp_path_factory.mktemp(f"oauth-{request.param}"),
                           ("A", "B")) as (started, _):
        a, b = started.a, started.b
        async with browser(started.live) as admin_a, browser(started.live) as admin_b:
            await sign_in(started.live, admin_a, a.admin.email)
            await sign_in(started.live, admin_b, b.admin.email)
            assert (await install(started, admin_a, a, TEAM_A)).headers["location"] == \
                "/account?done=slack"
            assert (await install(started, admin_b, b, TEAM_B)).headers["location"] == \
                "/account?done=slack"
        yield started


async def start_install(two: Two, client: httpx.AsyncClient, org: Org) -> httpx.Response:
    """/account's "Add to Slack", followed to the redirect to Slack's authorize page."""
    page = await client.get("/account")
    assert page.status_code == 200
    link = re.search(r'href="(/slack/install\?[^"]+)"', page.text)
    assert link is not None, "no Add to Slack on the administrator's account page"
    return await client.get(link.group(1).replace("&amp;", "&"))


async def install(two: Two, client: httpx.AsyncClient, org: Org, team: str) -> httpx.Response:
    """The whole OAuth install in `client`'s browser: the answer of /slack/oauth_redirect."""
    started = await start_install(two, client, org)
    assert started.status_code == 302, started.text
    assert started.headers["location"].startswith(f"{two.fake.base_url}/oauth/v2/authorize")
    two.fake.approve(team)
    async with httpx.AsyncClient(timeout=30) as slack_side:  # the user at slack.com
        back = await slack_side.get(started.headers["location"])
    assert back.status_code == 302
    target = urlsplit(back.headers["location"])
    assert f"{target.scheme}://{target.netloc}" == two.live.base_url
    return await client.get(f"{target.path}?{target.query}")


async def member_in(two: Two, org: Org, team: str, name: str, role: str = "employee",
                    email: str | None = None) -> SlackMember:
    member = await org.add_member(name, role, email)
    slack_id = "U" + uuid.uuid4().hex[:10].upper()
    two.fake.add_user(slack_id, member.email, name=name, team=team)
    return SlackMember(member, slack_id)


async def installed_org(two: Two, team: str, name: str) -> Org:
    """A new organisation, subscribed, whose administrator installs the app in `team`."""
    org = await new_org(two.live, two.http, name)
    await two.live.app.state.runtime.subscriptions.ensure(org.id)
    async with browser(two.live) as admin:
        await sign_in(two.live, admin, org.admin.email)
        assert (await install(two, admin, org, team)).status_code == 303
    return org


async def home_opened(two: Two, team: str, user: str) -> httpx.Response:
    """`user` of `team` opens the app's Home (a signed event)."""
    return await two.slack.post(_event(team, {"type": "app_home_opened", "user": user,
                                              "tab": "home"}), "application/json")


async def command(two: Two, team: str, user: str, text: str, name: str = "/timesheet"
                  ) -> httpx.Response:
    return await two.slack.form({**command_fields(two.fake, name, text, user=user),
                                 "team_id": team})


async def review_dm(two: Two, org: Org, team: str) -> tuple[SlackMember, Any]:
    """A submission in `org` whose approver is in `team`: the DM asking them."""
    owner = await member_in(two, org, team, "Owner")
    approver = await member_in(two, org, team, "Approver")
    await org.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
        "id: $id, stages: $s) { id } }",
        {"id": owner.id, "s": [{"type": "person", "personIds": [approver.id],
                                "quorum": "any"}]})
    await add_record(owner.member, owner.member, day=0, hours=3)
    await submit(owner.member, owner.member)
    (dm,) = await two.fake.wait_for("chat.postMessage", channel=approver.slack_id)
    return approver, dm


def test_the_manifest_has_the_redirect_url_and_the_scopes_asked() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    oauth = manifest["oauth_config"]
    assert set(oauth["scopes"]["bot"]) == set(BOT_SCOPES)
    assert any(url.endswith("/slack/oauth_redirect") for url in oauth["redirect_urls"])


async def test_each_review_goes_to_its_own_workspace_with_its_own_token(two: Two) -> None:
    two.fake.reset()
    _approver, dm = await review_dm(two, two.b, TEAM_B)
    assert dm.token == two.fake.token_of(TEAM_B)
    _approver, dm = await review_dm(two, two.a, TEAM_A)
    assert dm.token == two.fake.token_of(TEAM_A)
    # No call of one organisation's work was made with the other's token.
    tokens = {call.token for call in two.fake.calls if call.method != "auth.test"}
    assert tokens <= {two.fake.token_of(TEAM_A), two.fake.token_of(TEAM_B)}


async def test_a_person_of_workspace_a_reaches_nothing_of_organisation_b(two: Two) -> None:
    two.fake.reset()
    bea = await member_in(two, two.b, TEAM_B, "Bea")
    # Someone in workspace A with Bea's e-mail address (A's administrators control it).
    mallory = "U" + uuid.uuid4().hex[:10].upper()
    two.fake.add_user(mallory, bea.member.email, name="Mallory", team=TEAM_A)
    logged = await command(two, TEAM_A, mallory, "2h fixing things", name="/time")
    assert logged.status_code == 200
    status = await command(two, TEAM_A, mallory, "status")
    assert status.status_code == 200
    answers = await two.fake.wait_for("response_url", count=2)
    for answer in answers:
        assert "Bea" not in str(answer.args.get("text")), answer.args
    # Nothing was logged in B for Bea.
    records = await bea.member.gql(
        "query($id: SvcId!) { getTimeRecords(filter: [{personId: $id}]) { id } }",
        {"id": bea.id})
    assert records["getTimeRecords"] == []
    # Her key pasted in workspace A links nothing: it is another organisation's.
    linked = await two.slack.interactive({
        "type": "view_submission", "team": {"id": TEAM_A}, "user": {"id": mallory},
        "api_app_id": "A0TIMEBOT", "trigger_id": "trigger.x",
        "view": {"id": "V1", "type": "modal", "callback_id": "timebot_link",
                 "private_metadata": "", "state": {"values": {"apikey": {"value": {
                     "type": "plain_text_input", "value": bea.member.apikey}}}}}})
    assert linked.status_code == 200
    assert "another organisation" in linked.json()["errors"]["apikey"]
    # Her Home in A shows nothing of B; every call went with A's token.
    opened = await two.slack.post(_event(TEAM_A, {"type": "app_home_opened", "user": mallory,
                                                  "tab": "home"}), "application/json")
    assert opened.status_code == 200
    (home,) = await two.fake.wait_for("views.publish", user_id=mallory)
    assert home.token == two.fake.token_of(TEAM_A)
    assert "Bea" not in str(home.args.get("view"))
    assert all(call.token != two.fake.token_of(TEAM_B) for call in two.fake.calls)


def _event(team: str, event: dict[str, Any]) -> bytes:
    import json
    body = event_body(event)
    body["team_id"] = team
    body["authorizations"] = [{"team_id": team, "user_id": f"UBOT{team}", "is_bot": True}]
    return json.dumps(body).encode()


async def _waiting(two: Two, org: Org, team: str, tag: str
                   ) -> tuple[SlackMember, SlackMember, Any]:
    """Owner and approver of `org` in `team` (names unique to `tag`), the owner's timesheet
    submitted: (owner, approver, the DM asking the approver)."""
    owner = await member_in(two, org, team, f"Oscar {tag}")
    approver = await member_in(two, org, team, f"Victor {tag}")
    await org.admin.gql(
        "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
        "id: $id, stages: $s) { id } }",
        {"id": owner.id, "s": [{"type": "person", "personIds": [approver.id],
                                "quorum": "any"}]})
    await add_record(owner.member, owner.member, day=0, hours=3)
    await submit(owner.member, owner.member)
    (dm,) = await two.fake.wait_for("chat.postMessage", channel=approver.slack_id)
    return owner, approver, dm


def _click(two: Two, team: str, user: str, action_id: str, value: str,
           channel: str = "D0NOWHERE") -> dict[str, Any]:
    return {"type": "block_actions", "team": {"id": team}, "user": {"id": user},
            "api_app_id": "A0TIMEBOT", "trigger_id": f"trigger.{uuid.uuid4().hex[:8]}",
            "response_url": two.fake.response_url(uuid.uuid4().hex[:8]),
            "channel": {"id": channel},
            "container": {"type": "message", "channel_id": channel, "message_ts": "1.0"},
            "message": {"ts": "1.0", "text": ""},
            "actions": [{"type": "button", "action_id": action_id, "block_id": "b",
                         "value": value, "action_ts": "1.0"}]}


def _view(team: str, user: str, callback_id: str, metadata: str,
          values: dict[str, Any]) -> dict[str, Any]:
    return {"type": "view_submission", "team": {"id": team}, "user": {"id": user},
            "api_app_id": "A0TIMEBOT", "trigger_id": f"trigger.{uuid.uuid4().hex[:8]}",
            "view": {"id": "V1", "type": "modal", "callback_id": callback_id,
                     "private_metadata": metadata, "state": {"values": values}}}


COMMANDS = [("/time", "list"), ("/time", "week"), ("/time", "delete 1"), ("/time", "undo"),
            ("/time", "edit 1 1h"), ("/time", "2h reviewing"), ("/timesheet", "status"),
            ("/timesheet", "submit"), ("/timesheet", "remind"),
            ("/timesheet", "nudges off")]


async def test_no_command_button_view_or_home_crosses_organisations_either_way(
    two: Two,
) -> None:
    """Both directions: an administrator of one organisation, in its workspace, whose Slack
    address is the other organisation's approver's, tries every command, a copy of every
    button and view of the other's, and Home: nothing of the other is read or changed, no
    call goes out with the other workspace's token, and the approver still decides there."""
    for tag, (home, home_org), (other, other_org) in (
            ("ab", (TEAM_A, two.a), (TEAM_B, two.b)),
            ("ba", (TEAM_B, two.b), (TEAM_A, two.a))):
        two.fake.reset()
        owner, victim, dm = await _waiting(two, other_org, other, tag)
        value = buttons(dm)["timebot_approve"]
        request = json.loads(value)
        record_id = (await owner.member.gql(
            "query($id: SvcId!) { getTimeRecords(filter: [{personId: $id}]) { id } }",
            {"id": owner.id}))["getTimeRecords"][0]["id"]
        intruder = await member_in(two, home_org, home, f"Ivy {tag}", role="admin",
                                   email=victim.member.email)
        user = intruder.slack_id
        two.fake.reset()
        for name, text in COMMANDS:
            answer = await command(two, home, user, text, name=name)
            assert answer.status_code == 200 and NOT_CONNECTED not in answer.text
        told = await two.fake.wait_for("response_url", count=len(COMMANDS))
        for click in (
                _click(two, home, user, "timebot_approve", value, dm.args["channel"]),
                _click(two, home, user, "timebot_reject", value, dm.args["channel"]),
                _click(two, home, user, "timebot_approve_all",
                       json.dumps([[request[0], request[1]]])),
                _click(two, home, user, "timebot_time_undo", record_id),
                _click(two, home, user, "timebot_time_edit", record_id),
                _click(two, home, user, "timebot_nudge_off", "off"),
                _view(home, user, "timebot_reject_reason",
                      json.dumps({"request": value, "channel": dm.args["channel"]}),
                      {"reason": {"value": {"type": "plain_text_input", "value": "no"}}}),
                _view(home, user, "timebot_time_edit_view", record_id,
                      {"entry": {"value": {"type": "plain_text_input", "value": "9h"}}}),
                _view(home, user, "timebot_link", "", {"apikey": {"value": {
                    "type": "plain_text_input", "value": victim.member.apikey}}})):
            assert (await two.slack.interactive(click)).status_code == 200
        opened = await two.slack.post(_event(home, {"type": "app_home_opened", "user": user,
                                                    "tab": "home"}), "application/json")
        assert opened.status_code == 200
        (home_view,) = await two.fake.wait_for("views.publish", user_id=user)
        # Nothing of the other organisation was shown, nothing sent with its token.
        for call in [*told, home_view, *two.fake.calls]:
            assert f"Oscar {tag}" not in json.dumps(call.args), call.args
            assert call.token != two.fake.token_of(other), call.method
        # Nothing of it changed: the record is as it was, the timesheet still waits on
        # the approver, who decides it in the other workspace, as themselves.
        records = (await owner.member.gql(
            "query($id: SvcId!) { getTimeRecords(filter: [{personId: $id}]) { id duration } }",
            {"id": owner.id}))["getTimeRecords"]
        assert records == [{"id": record_id, "duration": 3 * 3_600_000}]
        clicked = await two.slack.interactive(_click(
            two, other, victim.slack_id, "timebot_approve", value, dm.args["channel"]))
        assert clicked.status_code == 200
        (update,) = await two.fake.wait_for("chat.update")
        assert f"Approved by Victor {tag}" in str(update.args)
        assert update.token == two.fake.token_of(other)
        # The owner's notice (sent after the decision) goes out there too, before the next.
        (notice,) = await two.fake.wait_for("chat.postMessage", channel=owner.slack_id)
        assert notice.token == two.fake.token_of(other)


async def test_a_team_not_installed_is_answered_and_not_acted_on(two: Two) -> None:
    two.fake.reset()
    answer = await command(two, TEAM_C, "U0STRANGER", "status")
    assert answer.status_code == 200
    assert answer.json() == {"response_type": "ephemeral", "text": NOT_CONNECTED}
    assert two.fake.calls == []


async def test_states_replayed_forged_expired_or_from_another_browser_are_refused(
    two: Two,
) -> None:
    async with browser(two.live) as admin, browser(two.live) as other:
        await sign_in(two.live, admin, two.a.admin.email)
        started = await start_install(two, admin, two.a)
        state = parse_qs(urlsplit(started.headers["location"]).query)["state"][0]
        assert started.cookies.get(STATE_COOKIE) == state
        code = two.fake.install_code(TEAM_A)
        # Another browser (no cookie) cannot finish it …
        stolen = await other.get(f"/slack/oauth_redirect?code={code}&state={state}")
        assert stolen.status_code == 400
        # … a forged state is refused even with a cookie to match …
        forged = "x" * 43
        other.cookies.set(STATE_COOKIE, forged)
        refused = await other.get(f"/slack/oauth_redirect?code={code}&state={forged}")
        assert refused.status_code == 401
        # … the right browser finishes once; the same redirect again is refused.
        done = await admin.get(f"/slack/oauth_redirect?code={code}&state={state}")
        assert done.status_code == 303
        admin.cookies.set(STATE_COOKIE, state)
        again = await admin.get(f"/slack/oauth_redirect?code={code}&state={state}")
        assert again.status_code == 401
        # A state left ten minutes and more is refused.
        started = await start_install(two, admin, two.a)
        state = parse_qs(urlsplit(started.headers["location"]).query)["state"][0]
        clock = two.live.clock
        saved = clock.offset_ms
        clock.offset_ms += 11 * 60_000
        try:
            late = await admin.get(f"/slack/oauth_redirect?code={two.fake.install_code(TEAM_A)}"
                                   f"&state={state}")
        finally:
            clock.offset_ms = saved
        assert late.status_code == 401


async def test_only_an_administrator_of_the_organisation_starts_an_install(two: Two) -> None:
    employee = await two.a.add_member("Emma", "employee")
    async with browser(two.live) as client, browser(two.live) as nobody:
        await sign_in(two.live, client, employee.email)
        page = await client.get("/account")
        assert "/slack/install" not in page.text
        assert (await client.get(
            f"/slack/install?organisation={two.a.id}")).status_code == 403
        signed_out = await nobody.get(f"/slack/install?organisation={two.a.id}")
        assert signed_out.status_code == 303
    async with browser(two.live) as admin_b:
        await sign_in(two.live, admin_b, two.b.admin.email)
        # B's administrator cannot start an install for A.
        assert (await admin_b.get(
            f"/slack/install?organisation={two.a.id}")).status_code == 403


async def test_a_workspace_connected_to_another_organisation_is_not_taken_over(
    two: Two,
) -> None:
    token_a = two.fake.token_of(TEAM_A)
    async with browser(two.live) as admin_b:
        await sign_in(two.live, admin_b, two.b.admin.email)
        refused = await install(two, admin_b, two.b, TEAM_A)
    assert refused.status_code == 409
    assert "already connected to another organisation" in refused.text
    two.fake.reset()
    _approver, dm = await review_dm(two, two.a, TEAM_A)
    # A's own token still (the refused install's token is never used).
    assert dm.token == token_a
    registry = installations_of(two.live.app.state.runtime)
    assert registry is not None
    assert registry.bots[TEAM_A].deps.workspace.configured_organisation == two.a.id


async def test_uninstalling_one_workspace_leaves_the_other_working_then_reinstall(
    two: Two,
) -> None:
    two.fake.reset()
    gone = await two.slack.post(_event(TEAM_A, {"type": "app_uninstalled"}),
                                "application/json")
    assert gone.status_code == 200
    two.fake.revoke(TEAM_A)
    _approver, dm = await review_dm(two, two.b, TEAM_B)
    assert dm.token == two.fake.token_of(TEAM_B)
    async with browser(two.live) as admin_a:
        await sign_in(two.live, admin_a, two.a.admin.email)
        page = await admin_a.get("/account")
        assert "not installed any more" in page.text and "Add to Slack" in page.text
        # A review in A meanwhile (not sent: the workspace is not installed) …
        approver = await member_in(two, two.a, TEAM_A, "Late")
        owner = await member_in(two, two.a, TEAM_A, "Owner2")
        await two.a.admin.gql(
            "mutation($id: SvcId!, $s: [SvcApprovalStageInput]) { editPersonApprovalStages("
            "id: $id, stages: $s) { id } }",
            {"id": owner.id, "s": [{"type": "person", "personIds": [approver.id],
                                    "quorum": "any"}]})
        await add_record(owner.member, owner.member, day=0, hours=2)
        await submit(owner.member, owner.member)
        # … and installing again serves A with the new token.
        done = await install(two, admin_a, two.a, TEAM_A)
        assert done.status_code == 303
        page = await admin_a.get("/account")
        assert "not installed any more" not in page.text
    new_token = two.fake.token_of(TEAM_A)
    two.fake.reset()
    _approver, dm = await review_dm(two, two.a, TEAM_A)
    assert dm.token == new_token


def buttons(call: Any) -> dict[str, str]:
    return {element["action_id"]: element.get("value", "")
            for block in call.args.get("blocks") or []
            for element in block.get("elements") or [] if element.get("type") == "button"}


async def test_a_button_of_organisation_b_clicked_in_workspace_a_decides_nothing(
    two: Two,
) -> None:
    two.fake.reset()
    approver, dm = await review_dm(two, two.b, TEAM_B)
    value = buttons(dm)["timebot_approve"]
    # An administrator of A, in A, clicks a copy of B's Approve button.
    intruder = await member_in(two, two.a, TEAM_A, "Intruder", role="admin")
    payload = {
        "type": "block_actions", "team": {"id": TEAM_A}, "user": {"id": intruder.slack_id},
        "api_app_id": "A0TIMEBOT", "trigger_id": "trigger.a",
        "response_url": two.fake.response_url("intruder"),
        "channel": {"id": dm.args["channel"]},
        "container": {"type": "message", "channel_id": dm.args["channel"], "message_ts": "1.0"},
        "message": {"ts": "1.0", "text": ""},
        "actions": [{"type": "button", "action_id": "timebot_approve", "block_id": "b",
                     "value": value, "action_ts": "1.0"}]}
    clicked = await two.slack.interactive(payload)
    assert clicked.status_code == 200
    (refusal,) = await two.fake.wait_for("chat.postEphemeral", user=intruder.slack_id)
    assert refusal.token == two.fake.token_of(TEAM_A)
    # B's approver decides, as themselves, in B only.
    clicked = await two.slack.interactive({
        **payload, "team": {"id": TEAM_B}, "user": {"id": approver.slack_id},
        "trigger_id": "trigger.b", "response_url": two.fake.response_url("approver")})
    assert clicked.status_code == 200
    (update,) = await two.fake.wait_for("chat.update")
    assert "Approved by Approver" in str(update.args)
    assert update.token == two.fake.token_of(TEAM_B)


async def test_a_refused_token_or_revoked_tokens_disable_that_workspace_only(
    two: Two,
) -> None:
    two.fake.reset()
    # Slack refuses A's token (revoked without telling): the first call refused disables A.
    two.fake.revoke(TEAM_A)
    opened = await two.slack.post(_event(TEAM_A, {"type": "app_home_opened",
                                                  "user": "U0SOMEONE", "tab": "home"}),
                                  "application/json")
    assert opened.status_code == 200
    await two.fake.wait_for("users.info", user="U0SOMEONE")
    registry = installations_of(two.live.app.state.runtime)
    assert registry is not None
    workspace_a = registry.bots[TEAM_A].deps.workspace
    for _ in range(200):
        if not await workspace_a.active():
            break
        await asyncio.sleep(0.05)
    assert not await workspace_a.active()
    assert await registry.bots[TEAM_B].deps.workspace.active()
    # tokens_revoked for B's bot token disables B, and A's reinstall does not revive B.
    revoked = await two.slack.post(_event(TEAM_B, {"type": "tokens_revoked", "tokens": {
        "bot": [f"UBOT{TEAM_B}"]}}), "application/json")
    assert revoked.status_code == 200
    async with browser(two.live) as admin_a, browser(two.live) as admin_b:
        await sign_in(two.live, admin_a, two.a.admin.email)
        assert (await install(two, admin_a, two.a, TEAM_A)).status_code == 303
        assert await workspace_a.active()
        assert not await registry.bots[TEAM_B].deps.workspace.active()
        await sign_in(two.live, admin_b, two.b.admin.email)
        assert (await install(two, admin_b, two.b, TEAM_B)).status_code == 303
    two.fake.reset()
    _approver, dm = await review_dm(two, two.b, TEAM_B)
    assert dm.token == two.fake.token_of(TEAM_B)


@pytest.mark.parametrize("query, status", [
    ("", 400),                                          # nothing: not this browser's
    ("error=access_denied&state=x", 200),               # cancelled in Slack
    ("code=c&state=" + "s" * 5000, 400),                # enormous, no cookie
    ("code=%00%ff&state=%00", 400),
    ("code=c&code=d&state=a&state=b", 400),
])
async def test_hostile_redirects_are_answered_never_a_500(
    two: Two, query: str, status: int,
) -> None:
    async with browser(two.live) as client:
        answer = await client.get(f"/slack/oauth_redirect?{query}")
        assert answer.status_code == status
        client.cookies.set(STATE_COOKIE, "s" * 5000)
        forged = await client.get(f"/slack/oauth_redirect?code=c&state={'s' * 5000}")
        assert forged.status_code == 401
        odd = await client.get("/slack/install?organisation=%00" + "x" * 3000)
        assert odd.status_code == 303  # not signed in


async def test_a_rotating_token_is_refreshed_before_it_expires_and_kept_sealed(
    two: Two,
) -> None:
    team = "T0DDDDDDD"
    two.fake.add_team(team, "Dee")
    two.fake.rotation[team] = (1800, 43200)  # the install's token expires within the hour
    dee = await installed_org(two, team, "D")
    runtime = two.live.app.state.runtime
    # The install's token (its sender's first round may have refreshed it already).
    first = next(token for token, owner in two.fake.tokens.items() if owner == team)
    dora = await member_in(two, dee, team, "Dora")
    # Refreshed before the first use (its sender's first round, or this request).
    assert (await home_opened(two, team, dora.slack_id)).status_code == 200
    (home,) = await two.fake.wait_for("views.publish", user_id=dora.slack_id)
    await two.fake.wait_for("oauth.v2.access", grant_type="refresh_token")
    assert home.token == two.fake.token_of(team) != first
    # Sealed at rest: neither token is in the row as it is stored.
    async with runtime.state_sessions() as session:
        row = await session.get(SlackInstallation, team)
    assert row is not None and row.bot_refresh_token_sealed is not None
    assert home.token not in row.bot_token_sealed and "xoxe" not in row.bot_refresh_token_sealed
    assert runtime.box.open(row.bot_token_sealed) == home.token
    # The new token lasts 12 hours: the next request is not refreshed again.
    assert (await home_opened(two, team, dora.slack_id)).status_code == 200
    await two.fake.wait_for("views.publish", count=2, user_id=dora.slack_id)
    assert len([call for call in two.fake.calls_to("oauth.v2.access")
                if call.args.get("grant_type") == "refresh_token"]) == 1


async def test_an_org_wide_grid_install_serves_every_team_of_its_enterprise(two: Two) -> None:
    grid, teams = "E0GGGGGGG", ["T0GRID001", "T0GRID002"]
    two.fake.add_enterprise(grid, "Grid", teams)
    org = await installed_org(two, grid, "G")
    token = two.fake.token_of(grid)
    two.fake.reset()
    # A review in G whose approver is in the enterprise's second workspace.
    _approver, dm = await review_dm(two, org, teams[1])
    assert dm.token == token
    # A command from the first workspace is the enterprise install's.
    gina = await member_in(two, org, teams[0], "Gina")
    answer = await two.slack.form({
        **command_fields(two.fake, "/time", "help", user=gina.slack_id), "team_id": teams[0],
        "enterprise_id": grid, "is_enterprise_install": "true"})
    assert answer.status_code == 200 and NOT_CONNECTED not in answer.text
    (told,) = await two.fake.wait_for("response_url")
    assert "/time" in str(told.args.get("text"))
    # Another enterprise's team is not connected by it.
    stranger = await two.slack.form({
        **command_fields(two.fake, "/time", "help", user="U0OTHER"), "team_id": "T0ELSEWH",
        "enterprise_id": "E0OTHER", "is_enterprise_install": "true"})
    assert stranger.json() == {"response_type": "ephemeral", "text": NOT_CONNECTED}


@pytest.mark.parametrize("team, event", [
    ("T0UUUUUUU", {"type": "app_uninstalled"}),
    ("T0RRRRRRR", {"type": "tokens_revoked", "tokens": {"bot": ["UBOTT0RRRRRRR"]}}),
])
async def test_an_uninstalled_installation_s_tokens_are_deleted_and_never_used_again(
    two: Two, team: str, event: dict[str, Any],
) -> None:
    """Slack says the installation is gone: its tokens are deleted, and a later request from
    that team is answered without a call carrying them (no auth.test probe either: an OAuth
    installation comes back only through a new install)."""
    two.fake.add_team(team, "Gone")
    org = await installed_org(two, team, f"Gone {team}")
    runtime = two.live.app.state.runtime
    token = two.fake.token_of(team)
    uma = await member_in(two, org, team, "Uma")
    assert (await home_opened(two, team, uma.slack_id)).status_code == 200
    (home,) = await two.fake.wait_for("views.publish", user_id=uma.slack_id)
    assert home.token == token

    gone = await two.slack.post(_event(team, event), "application/json")
    assert gone.status_code == 200
    two.fake.revoke(team)
    for _ in range(200):
        async with runtime.state_sessions() as session:
            if await session.get(SlackInstallation, team) is None:
                break
        await asyncio.sleep(0.05)
    async with runtime.state_sessions() as session:
        assert await session.get(SlackInstallation, team) is None, "its tokens are still kept"
    calls_before = len(two.fake.calls)

    asked = await command(two, team, uma.slack_id, "status")
    assert asked.status_code == 200
    assert (await home_opened(two, team, uma.slack_id)).status_code == 200
    # The other workspaces still work: a review in B goes out (so the fake saw all before it).
    _approver, dm = await review_dm(two, two.b, TEAM_B)
    assert dm.token == two.fake.token_of(TEAM_B)
    used = [(call.method, call.args) for call in two.fake.calls[calls_before:]
            if call.token == token]
    assert used == [], "a call was made with the revoked token"
    # Its tokens are gone, not its organisation's claim: B cannot take the team over.
    async with browser(two.live) as admin_b:
        # B's administrator has asked for codes in this module's other tests already: past
        # the window of the per-address limit (5 requests in 15 minutes), as a day would be.
        two.live.clock.offset_ms += 15 * 60_000 + 1
        await sign_in(two.live, admin_b, two.b.admin.email)
        refused = await install(two, admin_b, two.b, team)
    assert refused.status_code == 409, refused.text
