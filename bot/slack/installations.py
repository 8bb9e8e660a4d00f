"""Every workspace the app is installed in, and which one a request from Slack is for.

Each installation is served by its own bot (bot.slack.component builds it): a bolt app authorized
with that installation's token only, a `Workspace` serving that installation's one
organisation, a Web API client with that token, and a sender whose queue rows carry the
team id (its worker claims only those). A request is routed by its `team_id` (or, without one,
`enterprise_id`) to that bot; a team timebot does not know is answered "not connected",
logged, and never acted on. SLACK_BOT_TOKEN's workspace is one more bot (`shortcut`).

A token installed again (OAuth) replaces the bot's token in place: the listeners, subscribers
and queued rows of the team stay its own. Another process's install is seen by `watch`, which
reads the installations every `WATCH_SECONDS` (until then this process's bot of that team,
its old token refused, holds its messages: nothing is lost).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.installation import NOT_CONNECTED
from bot.slack.oauth_store import InstallationStore, InstalledBot, Refresh
from bot.slack.workspace import CACHE_SECONDS, token_hash
from timebot.state.slack_workspaces import WorkspaceRecord

log = structlog.get_logger("timebot.slack.installations")

WATCH_SECONDS = 30.0
DUE_SECONDS = 1.0
# Every installation's workspace state (installed or not) read in one query this often, and
# handed to each bot: within its cache's CACHE_SECONDS, so a request or a loop of a bot does
# not read its own (#27: 100 reads queued for SQLite's write lock ahead of the acks).
STATES_SECONDS = CACHE_SECONDS / 2
# Token rotation: a token is refreshed when it expires within the hour (Slack's last 12 h),
# before a request is handled or a message sent with it; a failed refresh is tried again
# after RETRY_MS (the old token still works meanwhile).
ROTATE_BEFORE_MS = 3_600_000
RETRY_MS = 60_000


class InstallationAuthorize(AsyncAuthorize):
    """bolt's authorize for one installation's app: its token (as the client holds it now)
    for its own team only. Ids not known yet (SLACK_BOT_TOKEN) come from one auth.test."""

    def __init__(self, client: AsyncWebClient, team_id: str | None = None,
                 enterprise_id: str | None = None, bot_id: str | None = None,
                 bot_user_id: str | None = None,
                 fresh: Callable[[], Awaitable[None]] | None = None) -> None:
        self.client = client
        self.fresh = fresh  # token rotation: refreshes the token when it is due
        self.ids: dict[str, Any] | None = (
            {"team_id": team_id, "enterprise_id": enterprise_id, "bot_id": bot_id,
             "bot_user_id": bot_user_id} if team_id else None)
        self.token_rotation_expiration_minutes = 120

    async def __call__(self, *, context: AsyncBoltContext, enterprise_id: str | None,
                       team_id: str | None, user_id: str | None,
                       **_actor: Any) -> AuthorizeResult | None:
        if self.fresh is not None:
            await self.fresh()
        if self.ids is None:
            answer = await self.client.auth_test()
            self.ids = {"team_id": answer.get("team_id"),
                        "enterprise_id": answer.get("enterprise_id") or None,
                        "bot_id": answer.get("bot_id"), "bot_user_id": answer.get("user_id")}
        ids = self.ids
        org_wide = ids["team_id"] == ids["enterprise_id"]  # any team of the enterprise
        if team_id != ids["team_id"] and not ((team_id is None or org_wide) and enterprise_id
                                              and enterprise_id == ids["enterprise_id"]):
            return None
        return AuthorizeResult(
            enterprise_id=ids["enterprise_id"],
            team_id=team_id if org_wide else ids["team_id"],
            bot_id=ids["bot_id"], bot_user_id=ids["bot_user_id"], bot_token=self.client.token,
            user_id=user_id)


Build = Callable[[InstalledBot], Any]  # -> SlackBot (bot.slack.component), started by `start`
Start = Callable[[Any], Awaitable[None]]
Retoken = Callable[[Any, InstalledBot], Awaitable[None]]
States = Callable[[], Awaitable[dict[str, WorkspaceRecord]]]  # by token hash


class Installations:
    """The bots by team: SLACK_BOT_TOKEN's (`shortcut`) and the OAuth installations'."""

    def __init__(self, store: InstallationStore | None, build: Build, start: Start,
                 retoken: Retoken, refresh: Refresh | None = None,
                 now_ms: Callable[[], int] | None = None, states: States | None = None
                 ) -> None:
        self.store = store
        self.states = states
        self.build = build
        self.start = start
        self.retoken = retoken
        self.refresh = refresh
        self.now_ms = now_ms or (lambda: 0)
        self.shortcut: Any = None
        self.bots: dict[str, Any] = {}
        self._tokens: dict[str, str] = {}
        self._via: dict[str, str] = {}  # a team of an org-wide install -> its enterprise
        self._expires: dict[str, int] = {}  # token rotation: when each token must be renewed
        self._rotating: dict[str, asyncio.Lock] = {}
        self._lock = asyncio.Lock()

    def fresh_for(self, team_id: str) -> Callable[[], Awaitable[None]]:
        async def fresh() -> None:
            due = self._expires.get(team_id)
            if due is not None and due <= self.now_ms():
                await self._rotate(team_id)
        return fresh

    def gone_for(self, team_id: str) -> Callable[[], Awaitable[None]]:
        """What an installation's bot calls when Slack says it is gone: its tokens deleted
        (bolt's `delete_installation`), no rotation due; the bot stays, its workspace
        uninstalled, until a new install gives it a new token."""
        async def gone() -> None:
            self._expires.pop(team_id, None)
            bot = self.bots.get(team_id)
            if self.store is None or bot is None:
                return
            enterprise_id = bot.deps.workspace.installed_team[1] \
                if bot.deps.workspace.installed_team else None
            await self.store.async_delete_installation(enterprise_id=enterprise_id,
                                                       team_id=team_id)
        return gone

    async def _rotate(self, team_id: str) -> None:
        lock = self._rotating.setdefault(team_id, asyncio.Lock())
        async with lock:
            due = self._expires.get(team_id)
            if self.store is None or self.refresh is None or due is None \
                    or due > self.now_ms():
                return  # refreshed while this waited
            try:
                found = await self.store.rotate(team_id, self.refresh, ROTATE_BEFORE_MS)
            except Exception as error:  # Slack or the database away: the old token still works
                log.warning("slack_token_rotation_failed", team=team_id,
                            error=str(error)[:200], retry_in_ms=RETRY_MS)
                self._expires[team_id] = self.now_ms() + RETRY_MS
                return
            if found is not None:
                await self.serve(found)

    async def serve(self, found: InstalledBot) -> Any:
        """The bot of an installation (built and started the first time; its token replaced
        when it changed)."""
        async with self._lock:
            bot = self.bots.get(found.team_id)
            if bot is None:
                bot = self.build(found)
                self.bots[found.team_id] = bot
                self._tokens[found.team_id] = token_hash(found.token)
                await self.start(bot)
                log.info("slack_installation_served", team=found.team_id,
                         organisation=found.organisation_id)
            elif self._tokens.get(found.team_id) != token_hash(found.token):
                self._tokens[found.team_id] = token_hash(found.token)
                await self.retoken(bot, found)
            if found.expires_ms is None:
                self._expires.pop(found.team_id, None)
            else:
                self._expires[found.team_id] = found.expires_ms - ROTATE_BEFORE_MS
            return bot

    async def serve_all(self) -> None:
        if self.store is None:
            return
        for found in await self.store.all_installed():
            await self.serve(found)

    async def watch(self) -> None:
        """Every process: new installations and new tokens of other processes' installs."""
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            try:
                await self.serve_all()
            except Exception:  # the database away for a moment: next round
                log.exception("slack_installations_unread")

    async def refresh_states(self) -> None:
        """One read of every workspace's state, handed to each installation's bot."""
        if self.states is None:
            return
        bots = [(bot.deps.workspace, bot.deps.workspace.changes())
                for bot in list(self.bots.values())]
        read_at = time.monotonic()
        records = await self.states()
        for workspace, changes in bots:
            workspace.seen(records.get(workspace.token_hash), changes, read_at)

    async def keep_states(self) -> None:
        """Every process, every STATES_SECONDS: `refresh_states`."""
        while True:
            try:
                await self.refresh_states()
            except Exception:  # the database away for a moment: each bot reads its own
                log.exception("slack_workspace_states_unread")
            await asyncio.sleep(STATES_SECONDS)

    async def wake_due(self, due: Callable[[], Awaitable[list[str]]]) -> None:
        """Every second, one query for all installations: the senders with rows due are
        woken (each polls on its own only every few seconds)."""
        while True:
            await asyncio.sleep(DUE_SECONDS)
            try:
                teams = await due()
            except Exception:  # the database away for a moment: next round
                log.exception("slack_due_unread")
                continue
            for team in teams:
                bot = self.bots.get(team)
                if bot is not None:
                    bot.deps.sender.worker.wake()

    async def installed(self, team_id: str) -> Any:
        """Called when an OAuth install stored `team_id`'s installation."""
        assert self.store is not None
        found = await self.store.installed(team_id)
        if found is None:
            return None
        bot = await self.serve(found)
        await bot.deps.workspace.installed_now(found.team_id, found.enterprise_id)
        return bot

    async def bot_for(self, team_id: str | None, enterprise_id: str | None) -> Any:
        """The bot a request from (team, enterprise) is for; None: a team timebot does not
        know (or a request naming none)."""
        if team_id:
            bot = self.bots.get(self._via.get(team_id, team_id))
            if bot is not None:
                return bot
        if self.store is not None and (team_id or enterprise_id):
            found = await self.store.installed(team_id, enterprise_id)
            if found is not None:
                if team_id and found.org_wide:  # that team's requests: its enterprise's bot
                    self._via[team_id] = found.team_id
                return await self.serve(found)
        if self.shortcut is not None:
            if len(self.bots) == 0 or await self.shortcut.deps.workspace.admits(
                    team_id, enterprise_id):
                return self.shortcut  # its own gate answers another team's requests
        return None

    async def app_for(self, request: AsyncBoltRequest) -> AsyncApp | None:
        bot = await self.bot_for(request.context.team_id, request.context.enterprise_id)
        return bot.app if bot is not None else None


def not_connected(request: AsyncBoltRequest) -> BoltResponse:
    """The answer to a request for a team timebot does not know: logged, never acted on."""
    body = request.body if isinstance(request.body, dict) else {}
    log.warning("slack_foreign_request", team=request.context.team_id,
                enterprise=request.context.enterprise_id,
                kind=body.get("command") or body.get("type"), effect="ignored: not installed")
    if body.get("command"):
        return BoltResponse(status=200, body=json.dumps(
            {"response_type": "ephemeral", "text": NOT_CONNECTED}),
            headers={"content-type": "application/json"})
    return BoltResponse(status=200, body="")
