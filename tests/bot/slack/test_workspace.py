"""The workspace serves one organisation and one team, and notices when it is uninstalled.

Its own timebot (two organisations on one embedded service; Slack for the first), driven by
signed requests against the fake Slack; the state is read back with `timebot slack status`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.slack.installation import NOT_CONNECTED
from tests.bot.slack.harness import SlackHarness, SlackMember, start_slack_harness
from tests.bot.slack.signing import action_payload, command_fields, event_body
from tests.bot.slack.test_approvals import person_stages, submitted
from tests.mail.reviews_support import org_events, outbox_rows, wait_for
from tests.service.test_approvals_support import add_record, submit
from tests.support import TEST_SECRET_KEY, new_org
from tests.timebot.test_cli import Run, cli_env, timebot
from timebot.runtime import Runtime

OTHER_TEAM = "T0ELSEWHERE"
MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack-manifest.yaml"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def w(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[SlackHarness]:
    started = await start_slack_harness(
        request.param, tmp_path_factory.mktemp(f"slack-workspace-{request.param}"))
    try:
        yield started
    finally:
        await started.stop()


def runtime_of(w: SlackHarness) -> Runtime:
    return w.live.app.state.runtime  # type: ignore[no-any-return]


async def cli(w: SlackHarness, *args: str) -> Run:
    """`timebot …` on the harness's databases, as the operator runs it beside the server."""
    settings = w.live.settings
    env = cli_env(settings.data_dir, TIMEBOT_SECRET_KEY=TEST_SECRET_KEY,
                  TIMEBOT_DATABASE_URL=settings.database_url,
                  TIMEBOT_SERVICE_DATABASE_URL=settings.service_database_url)
    run = await timebot(env, *args)
    assert run.code == 0, run.err
    return run


async def slack_status(w: SlackHarness) -> str:
    return (await cli(w, "slack", "status")).out


async def asked_by_mail(w: SlackHarness, approver: SlackMember, org_id: str) -> None:
    """Until the review request reached the approver by mail and every event of the
    organisation was dispatched (the Slack channel had its turn)."""
    runtime = runtime_of(w)
    await wait_for(lambda: outbox_rows(runtime, approver.member.email),
                   what="the review request by mail")

    async def dispatched() -> bool:
        rows = await org_events(runtime, org_id)
        return bool(rows) and all(row.status == "done" for row in rows)

    await wait_for(dispatched, what="the events dispatched")
    await wait_for(lambda: _drained(w), what="the Slack queue drained")


async def _drained(w: SlackHarness) -> bool:
    return await w.bot.deps.sender.pending() == 0


async def one_submission(w: SlackHarness, name: str) -> tuple[SlackMember, SlackMember]:
    """A person of `w.org` submits; one approver (both are also users of the fake Slack)."""
    owner = await w.slack_member(f"{name} Owner")
    approver = await w.slack_member(f"{name} Approver", role="manager")
    await person_stages(w, owner, [approver])
    await add_record(owner.member, owner.member, day=0, hours=3)
    await submit(owner.member, owner.member)
    return owner, approver


def calls_about(w: SlackHarness, *members: SlackMember) -> list[Any]:
    marks = {m.slack_id for m in members} | {"D" + m.slack_id[1:] for m in members} | {
        m.member.email for m in members}
    return [c for c in w.fake.calls if marks & {str(v) for v in c.args.values()}]


async def reinstall(w: SlackHarness, member: SlackMember) -> None:
    """Installed again: the token works, and the next request from the team notices it."""
    w.fake.install()
    response = await w.slack.event({"type": "app_home_opened", "user": member.slack_id,
                                    "tab": "home"})
    assert response.status_code == 200
    await w.fake.wait_for("views.publish", user_id=member.slack_id)


def test_the_manifest_subscribes_to_uninstalls() -> None:
    manifest = yaml.safe_load(MANIFEST.read_text())
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    assert {"app_uninstalled", "tokens_revoked"} <= set(events)


async def test_another_organisations_reviews_never_reach_the_workspace(
    w: SlackHarness,
) -> None:
    w.fake.reset()
    _owner, _approvers, _event, dms = await submitted(w, approvers=1)
    assert dms  # the workspace serves the first organisation (the only one then)
    other = await new_org(w.live, w.http, "Other")
    await runtime_of(w).subscriptions.ensure(other.id)
    b = replace(w, org=other)
    b_owner, b_approver = await one_submission(b, "Bea")
    await asked_by_mail(b, b_approver, other.id)
    # Not looked up by e-mail, nothing posted: Slack is not asked about them at all.
    assert calls_about(w, b_owner, b_approver) == []
    # Nor may they link their key through this workspace.
    linked = await w.slack.view_submission(
        user=b_approver.slack_id, callback_id="timebot_link",
        values={"apikey": {"value": {"type": "plain_text_input",
                                     "value": b_approver.member.apikey}}})
    assert linked.status_code == 200
    assert "another organisation" in linked.json()["errors"]["apikey"]
    # The first organisation's requests still go out.
    _owner, (approver,), _event, dms = await submitted(w, approvers=1)
    assert dms[0].args["channel"] == approver.slack_id


async def test_requests_of_another_team_are_answered_not_acted_on(w: SlackHarness) -> None:
    w.fake.reset()
    member = await w.slack_member("Tom")
    fields = command_fields(w.fake, "/timesheet", "status", user=member.slack_id)
    answer = await w.slack.form({**fields, "team_id": OTHER_TEAM})
    assert answer.status_code == 200
    assert answer.json() == {"response_type": "ephemeral", "text": NOT_CONNECTED}
    payload = action_payload(w.fake, user=member.slack_id, action_id="timebot_link_open")
    clicked = await w.slack.interactive({**payload, "team": {"id": OTHER_TEAM}})
    assert clicked.status_code == 200
    told = await w.fake.wait_for("response_url", response_key=payload["response_url"][-8:])
    assert told[0].args["text"] == NOT_CONNECTED
    # Another workspace uninstalling the app does not stop this one.
    body = event_body({"type": "app_uninstalled"})
    body.update(team_id=OTHER_TEAM, authorizations=[{"team_id": OTHER_TEAM}])
    event = await w.slack.post(json.dumps(body).encode(), "application/json")
    assert event.status_code == 200
    # Nothing was acted on: neither the command (no profile read) nor the button (no modal).
    assert calls_about(w, member) == []
    assert w.fake.calls_to("views.open") == []
    # The workspace's own team is still served, and still installed.
    own = command_fields(w.fake, "/timesheet", "status", user=member.slack_id)
    await w.slack.form(own)
    await w.fake.wait_for("response_url", response_key=own["response_url"][-8:])
    assert "installed, serves organisation" in await slack_status(w)


async def test_uninstalled_then_installed_again(w: SlackHarness) -> None:
    w.fake.reset()
    _owner, (known,), _event, _dms = await submitted(w, approvers=1)
    w.fake.uninstall()
    response = await w.slack.event({"type": "app_uninstalled"})
    assert response.status_code == 200
    await wait_for(lambda: _uninstalled(w), what="the uninstall recorded")
    w.fake.reset()
    try:
        _owner, approver = await one_submission(w, "Una")
        await asked_by_mail(w, approver, w.org.id)
        assert w.fake.calls == []  # no call at all: not even one Slack would refuse
        status = await slack_status(w)
        assert "Slack: uninstalled since" in status and "app_uninstalled" in status
        assert "warning: Slack: uninstalled since" in (await cli(w, "people", "list")).err
    finally:
        await reinstall(w, known)
    assert "installed, serves organisation" in await slack_status(w)
    _owner, again = await one_submission(w, "Rein")
    await w.fake.wait_for("chat.postMessage", channel=again.slack_id)


async def test_a_refused_token_is_uninstalled_and_nothing_is_lost(w: SlackHarness) -> None:
    owner, (approver,), _event, _dms = await submitted(w, approvers=1)
    w.fake.reset()
    w.fake.uninstall()  # the token revoked, no event: the next call is refused
    try:
        second = await w.slack_member("Second Owner")
        await person_stages(w, second, [approver])
        await add_record(second.member, second.member, day=0, hours=2)
        await submit(second.member, second.member)
        refused = await w.fake.wait_for("chat.postMessage", channel=approver.slack_id)
        await wait_for(lambda: _uninstalled(w), what="the refusal recorded")
        assert len(refused) == 1
        status = await slack_status(w)
        assert "Slack: uninstalled since" in status and "token_revoked" in status
    finally:
        await reinstall(w, owner)
    # The refused DM was kept, and goes out once the app is back.
    posted = await w.fake.wait_for("chat.postMessage", count=2, channel=approver.slack_id)
    assert "Second Owner" in str(posted[1].args.get("text"))


async def _uninstalled(w: SlackHarness) -> bool:
    record = await w.bot.deps.workspace.record()
    return record is not None and not record.active
