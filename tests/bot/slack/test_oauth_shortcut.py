"""SLACK_BOT_TOKEN beside SLACK_CLIENT_ID / SLACK_CLIENT_SECRET (#27): the token's workspace
is one more installation. bolt is configured explicitly, so the client id in the process's
environment no longer switches it to its file installation store in $HOME (which ignored the
token: every command answered "please install")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.bot.slack.fake_slack import TEAM_ID
from tests.bot.slack.harness import SlackHarness, start_slack_harness
from tests.bot.slack.test_oauth_install import TEAM_B, Two, install
from tests.support import new_org
from tests.timebot.signin_support import browser, sign_in

OAUTH = {"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "client-secret"}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def both(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
               ) -> AsyncIterator[tuple[SlackHarness, Path]]:
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        # Where bolt's own environment lookups would find them, and its file store would go.
        for name, value in OAUTH.items():
            patch.setenv(name, value)
        patch.setenv("HOME", str(home))
        started = await start_slack_harness(
            request.param, tmp_path_factory.mktemp(f"shortcut-{request.param}"), OAUTH)
        try:
            yield started, home
        finally:
            await started.stop()


async def test_the_token_still_works_beside_a_client_id(
    both: tuple[SlackHarness, Path],
) -> None:
    h, home = both
    h.fake.reset()
    ann = await h.slack_member("Ann")
    answer = await h.slack.command("/time", "help", user=ann.slack_id)
    assert answer.status_code == 200
    (told,) = await h.fake.wait_for("response_url")
    assert "install" not in str(told.args.get("text")).lower()
    assert "/time" in str(told.args.get("text"))
    assert list(home.iterdir()) == []  # no file installation store in $HOME


async def test_the_tokens_workspace_cannot_be_taken_by_another_organisation(
    both: tuple[SlackHarness, Path],
) -> None:
    h, _home = both
    h.fake.add_team(TEAM_B, "Beta")
    h.fake.add_team(TEAM_ID, "Test")
    ann = await h.slack_member("Ann")  # the token's workspace serves h.org (pinned now)
    assert (await h.slack.command("/time", "help", user=ann.slack_id)).status_code == 200
    other = await new_org(h.live, h.http, "Other")
    two = Two(h.live, h.fake, h.http, h.slack, h.org, other)
    async with browser(h.live) as admin:
        await sign_in(h.live, admin, other.admin.email)
        refused = await install(two, admin, other, TEAM_ID)
        assert refused.status_code == 409
        # Its own workspace it installs.
        assert (await install(two, admin, other, TEAM_B)).status_code == 303
