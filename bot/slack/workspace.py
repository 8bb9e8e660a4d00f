"""The Slack workspace this bot serves: its team (learned from `auth.test` with SLACK_BOT_TOKEN),
the ONE organisation it serves, and whether the app is installed there.

The state is a `slack_workspaces` row (timebot's own database, keyed by team id and found by
the token's hash), so every worker and replica agrees; each process reads it at most every
`CACHE_SECONDS`, and sees its own changes at once.

- Organisation: TIMEBOT_SLACK_ORGANISATION, else the one recorded for the team, else the only
  organisation served, recorded then (pinned: an organisation added later does not take the
  workspace over, nor leave it serving nobody). Several and none recorded: it serves none.
- Uninstalled: `app_uninstalled`, `tokens_revoked` (bot tokens) or a call refused with
  `account_inactive` / `invalid_auth` / `token_revoked` record `uninstalled_ms` (logged once,
  by the process whose update took); from then on no Slack call is made (bot.slack.installation).
- Installed again: a successful `auth.test` clears it. It is probed at start (a new token in
  the environment after a restart), every `PROBE_SECONDS` while uninstalled (one process: a
  singleton), and on each request from the team while uninstalled (Slack sends none to an
  app that is not installed, so those are few: an event in flight, or the reinstall's own).
  Only SLACK_BOT_TOKEN's workspace is probed: an OAuth installation comes back only through a
  new install (a new token: `installed_now`), and its old one, deleted when Slack said it is
  gone (bot.slack.installations), is never sent again.

Several installations (#27): a row per team with its organisation. An OAuth installation's
workspace knows its team from the install (no auth.test to admit a request), and the state of
every installation is read in one query for all of them (bot.slack.installations), not one each.
"""

from __future__ import annotations

import asyncio
import hashlib
import time

import structlog
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from plumbing.db import is_busy
from plumbing.tasks import stop_task
from timebot.directory.people import PeopleDirectory
from timebot.errors import TimebotError
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.models import SlackWorkspace
from timebot.state.slack_workspaces import WorkspaceRecord, record_of

log = structlog.get_logger("timebot.slack.workspace")

# What Slack answers with a token that no longer works (uninstalled, revoked, deactivated).
INSTALLATION_ERRORS = frozenset({"account_inactive", "invalid_auth", "token_revoked"})
# What the gated client answers itself, without calling Slack, while uninstalled.
UNINSTALLED = "app_uninstalled"
CACHE_SECONDS = 5.0
ORGANISATIONS_SECONDS = 60.0
PROBE_SECONDS = 900.0


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _same_workspace(own_team: str, own_enterprise: str | None, team_id: str | None,
                    enterprise_id: str | None) -> bool:
    """Whether a request from (team_id, enterprise_id) is for the workspace (own_team,
    own_enterprise)."""
    if team_id and own_team != own_enterprise:
        return team_id == own_team
    # No team named, or an org-wide install (kept under its enterprise id): any team of the
    # enterprise.
    return bool(enterprise_id) and enterprise_id == own_enterprise


class Workspace:
    """The workspace of SLACK_BOT_TOKEN. `client` is the bot's Web API client (its auth.test
    goes to Slack even while uninstalled)."""

    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], clock: Clock,
        directory: PeopleDirectory, token: str, configured_organisation: str | None,
        team_id: str | None = None, enterprise_id: str | None = None,
        reads: async_sessionmaker[AsyncSession] | None = None,
    ) -> None:
        self.sessions = sessions
        self.reads = reads or sessions  # the state's read: beside a writer on SQLite
        self.clock = clock
        self.directory = directory
        self.token_hash = token_hash(token)
        self.configured_organisation = configured_organisation
        # An OAuth installation's team (bot.slack.installations): known from the install, so a
        # request is admitted without a read or an auth.test.
        self.installed_team = (team_id, enterprise_id) if team_id else None
        self.client: AsyncWebClient | None = None
        self._record: WorkspaceRecord | None = None
        self._read_at: float | None = None
        self._changes = 0  # this process's changes: a read begun before one is not cached
        self._refused: str | None = None  # refused before any team was known (no row)
        self._only: tuple[float, str] | None = None
        self._said_ambiguous = False
        self._probe_lock = asyncio.Lock()
        self._probes = 0  # how many probes answered: one in flight is waited for, not repeated
        self._loop: asyncio.Task[None] | None = None

    # --- the state ------------------------------------------------------------------------

    async def record(self) -> WorkspaceRecord | None:
        """This token's workspace (read at most every CACHE_SECONDS, or handed over by one
        read for every installation: `seen`); None before auth.test ever answered."""
        now = time.monotonic()
        if self._read_at is not None and now - self._read_at < CACHE_SECONDS:
            return self._record
        changes = self._changes
        try:
            async with self.reads() as session:
                row = (await session.scalars(select(SlackWorkspace).where(
                    SlackWorkspace.token_hash == self.token_hash))).first()
        except Exception as error:
            # No connection in time (a Monday's load, issue #40): the state last read serves
            # this request (it goes on to its ack) rather than bolt's 500; never read: raised.
            if self._read_at is None or not is_busy(error):
                raise
            log.warning("slack_workspace_unread", error=type(error).__name__)
            return self._record
        record = record_of(row) if row else None
        if changes == self._changes:  # not a read begun before this process's own change
            self._record, self._read_at = record, now
        return record

    def changes(self) -> int:
        """This process's changes so far (taken before a read whose outcome goes to `seen`)."""
        return self._changes

    def seen(self, record: WorkspaceRecord | None, changes: int, read_at: float) -> None:
        """The state as a read begun at `read_at` found it (Installations.refresh_states: one
        read for every installation); ignored when this process changed it since."""
        if changes == self._changes and (self._read_at is None or read_at >= self._read_at):
            self._record, self._read_at = record, read_at

    async def active(self) -> bool:
        record = await self.record()
        if record is None:
            return self._refused is None
        return record.active

    async def organisation_id(self) -> str | None:
        """The organisation this workspace serves; None: not decided (several, none named)."""
        if self.configured_organisation:
            return self.configured_organisation
        record = await self.record()
        if record is not None and record.organisation_id:
            return record.organisation_id
        now = time.monotonic()
        if self._only is not None and self._only[0] > now:
            only = self._only[1]
        else:
            try:
                ids = await self.directory.organisation_ids()
            except TimebotError as error:
                log.warning("slack_organisation_unknown", error=str(error))
                return None
            if len(ids) != 1:
                if not self._said_ambiguous:
                    self._said_ambiguous = True
                    log.warning("slack_organisation_ambiguous", organisations=len(ids),
                                hint="set TIMEBOT_SLACK_ORGANISATION")
                return None
            only = ids[0]
            self._only = (now + ORGANISATIONS_SECONDS, only)
        if record is not None:
            await self._pin(record.team_id, only)
        return only

    async def _pin(self, team_id: str, organisation_id: str) -> None:
        async with unit_of_work(self.sessions) as session:
            result = await session.execute(
                update(SlackWorkspace)
                .where(SlackWorkspace.team_id == team_id,
                       SlackWorkspace.organisation_id.is_(None))
                .values(organisation_id=organisation_id, updated_ms=self.clock.now_ms()))
        if getattr(result, "rowcount", 0):
            log.info("slack_organisation_recorded", team=team_id, organisation=organisation_id)
        self._read_at, self._changes = None, self._changes + 1

    async def serves(self, organisation_id: str) -> bool:
        """Whether Slack may act for this organisation: installed, and its organisation."""
        return await self.active() and organisation_id == await self.organisation_id()

    async def admits(self, team_id: str | None, enterprise_id: str | None) -> bool | None:
        """Whether a request from (team, enterprise) comes from this workspace; None when its
        team is not known (auth.test never answered)."""
        if self.installed_team is not None:
            return _same_workspace(*self.installed_team, team_id, enterprise_id)
        record = await self.record()
        if record is None:
            await self.probe()
            record = await self.record()
        if record is None:
            return None
        return _same_workspace(record.team_id, record.enterprise_id, team_id, enterprise_id)

    @property
    def probed(self) -> bool:
        """Whether `auth.test` tells whether the app is installed again: SLACK_BOT_TOKEN's
        workspace only (see the module)."""
        return self.installed_team is None

    # --- changes --------------------------------------------------------------------------

    async def uninstalled(self, reason: str) -> None:
        """Record that the app is no longer installed (logged once, whoever records it)."""
        record = await self.record()
        if record is None and self.installed_team is not None:
            # An installation whose workspace was never recorded (no request nor probe since
            # it was installed): recorded now, so that every process sees it uninstalled.
            await self._installed(*self.installed_team)
            record = await self.record()
        if record is None:
            if self._refused is None:
                log.warning("slack_token_refused", reason=reason)
            self._refused = reason
            return
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            result = await session.execute(
                update(SlackWorkspace)
                .where(SlackWorkspace.team_id == record.team_id,
                       SlackWorkspace.uninstalled_ms.is_(None))
                .values(uninstalled_ms=now, uninstalled_reason=reason[:64], updated_ms=now))
        if getattr(result, "rowcount", 0):
            log.warning("slack_uninstalled", team=record.team_id, reason=reason,
                        effect="no Slack calls until installed again")
        self._read_at, self._changes = None, self._changes + 1

    async def probe(self) -> bool | None:
        """auth.test: True (installed; recorded), False (the token is refused: uninstalled),
        None (Slack did not answer). An OAuth installation is not probed: what it recorded."""
        if not self.probed:
            return await self.active()
        if self.client is None:
            return None
        seen = self._probes
        async with self._probe_lock:
            if self._probes != seen:  # probed while this waited: that answer is as fresh
                return await self.active()
            try:
                answer = await self.client.auth_test()
            except SlackApiError as error:
                code = str(error.response.get("error") or "")
                if code in INSTALLATION_ERRORS:
                    await self.uninstalled(code)
                    self._probes += 1
                    return False
                log.warning("slack_probe_failed", error=code)
                return None
            except (OSError, TimeoutError) as error:
                log.warning("slack_probe_failed", error=str(error) or type(error).__name__)
                return None
            team_id = str(answer.get("team_id") or "")
            if not team_id:
                return None
            await self._installed(team_id, str(answer.get("enterprise_id") or "") or None)
            self._probes += 1
            return True

    def retoken(self, token: str) -> None:
        """The installation's new token (installed again through OAuth)."""
        self.token_hash = token_hash(token)
        self._refused = None
        self._read_at, self._changes = None, self._changes + 1

    async def installed_now(self, team_id: str, enterprise_id: str | None) -> None:
        """Installed (OAuth): recorded for this token, not uninstalled any more."""
        await self._installed(team_id, enterprise_id)

    async def _installed(self, team_id: str, enterprise_id: str | None) -> None:
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            await session.execute(insert_ignoring(session, SlackWorkspace, ("team_id",)), {
                "team_id": team_id, "enterprise_id": enterprise_id, "updated_ms": now,
                "organisation_id": self.configured_organisation, "token_hash": self.token_hash})
            row = await session.get(SlackWorkspace, team_id, with_for_update=True)
            assert row is not None
            was = (row.uninstalled_ms, row.uninstalled_reason)
            if row.uninstalled_ms is not None:
                row.uninstalled_ms, row.uninstalled_reason = None, None
            if row.token_hash != self.token_hash or row.enterprise_id != enterprise_id:
                row.token_hash, row.enterprise_id = self.token_hash, enterprise_id
            if self.configured_organisation and \
                    row.organisation_id != self.configured_organisation:
                row.organisation_id = self.configured_organisation
            row.updated_ms = now
        if was[0] is not None:
            log.warning("slack_installed_again", team=team_id, uninstalled_ms=was[0],
                        reason=was[1])
        self._refused = None
        self._read_at, self._changes = None, self._changes + 1

    # --- the slow probe (one process: runtime.singletons) ---------------------------------

    def start(self) -> None:
        if self._loop is None and self.probed:
            self._loop = asyncio.create_task(self._probe_loop(), name="slack-workspace")

    async def stop(self) -> None:
        if self._loop is not None:
            await stop_task(self._loop)
            self._loop = None

    async def _probe_loop(self) -> None:
        while True:
            await asyncio.sleep(PROBE_SECONDS)
            try:
                if not await self.active():
                    await self.probe()
            except Exception:  # the database away for a moment: next round
                log.exception("slack_probe_failed")
