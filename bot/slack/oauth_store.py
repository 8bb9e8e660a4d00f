"""bolt's installation store and OAuth state store on timebot's own tables (async SQLAlchemy):

- `InstallationStore` (`slack_installations`): one row per team, the organisation it serves,
  its bot token (and refresh token) sealed with the runtime's SecretBox. A team already
  connected to another organisation is refused (`TakenOver`): an installation belongs to
  exactly one organisation, and only removing it (`timebot`'s operator) frees the team. When
  Slack says it is gone (`app_uninstalled`, `tokens_revoked`) the installation and its tokens
  are deleted (`forget`, bolt's `async_delete_installation`); the team stays its
  organisation's (`slack_workspaces`) until installed again.
- `StateStore` (`slack_oauth_states`): a state is 32 random bytes, stored as its SHA-256 with
  the organisation and administrator it was issued for; consumed once (an UPDATE that only
  one caller wins), refused after `STATE_SECONDS`.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import structlog
from slack_bolt.error import BoltError
from slack_sdk.oauth.installation_store import Bot, Installation
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.clock import Clock
from timebot.crypto import SecretBox
from timebot.state.db import unit_of_work
from timebot.state.models import SlackWorkspace
from timebot.state.slack_models import SlackInstallation, SlackOAuthState

log = structlog.get_logger("timebot.slack.oauth")

Refresh = Callable[[str], Awaitable[Any]]  # refresh token -> oauth.v2.access's answer

STATE_SECONDS = 600


def state_hash(state: str) -> str:
    return hashlib.sha256(state.encode("utf-8", "replace")).hexdigest()


@dataclass(frozen=True)
class Issued:
    """Whom a consumed state was issued for."""

    organisation_id: str
    person_id: str


class TakenOver(BoltError):
    """The workspace is connected to another organisation."""


@dataclass(frozen=True)
class InstalledBot:
    """An installation as the bot uses it (the token opened)."""

    team_id: str
    enterprise_id: str | None
    organisation_id: str
    token: str
    bot_id: str | None
    bot_user_id: str | None
    expires_ms: int | None = None  # token rotation: when the token expires (else never)

    @property
    def org_wide(self) -> bool:
        """An Enterprise Grid org-wide install (kept under its enterprise id)."""
        return self.team_id == self.enterprise_id


class StateStore(AsyncOAuthStateStore):  # type: ignore[misc]
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self.sessions = sessions
        self.clock = clock

    @property
    def logger(self) -> Any:
        return log

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        raise BoltError("a state is issued for an organisation: issue_for")

    async def issue_for(self, organisation_id: str, person_id: str) -> str:
        state = secrets.token_urlsafe(32)
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            await session.execute(delete(SlackOAuthState).where(
                SlackOAuthState.expires_ms < now))
            session.add(SlackOAuthState(
                state_hash=state_hash(state), organisation_id=organisation_id,
                person_id=person_id, expires_ms=now + STATE_SECONDS * 1000))
        return state

    async def async_consume(self, state: str) -> bool:
        """True once for a state issued here and not expired; False after that."""
        if not isinstance(state, str) or not state or len(state) > 200:
            return False
        now = self.clock.now_ms()
        async with unit_of_work(self.sessions) as session:
            result: Any = await session.execute(
                update(SlackOAuthState)
                .where(SlackOAuthState.state_hash == state_hash(state),
                       SlackOAuthState.consumed_ms.is_(None),
                       SlackOAuthState.expires_ms >= now)
                .values(consumed_ms=now))
        return bool(result.rowcount)

    async def issued(self, state: str) -> Issued | None:
        """Whom a consumed state was issued for."""
        async with self.sessions() as session:
            row = await session.get(SlackOAuthState, state_hash(state))
        if row is None or row.consumed_ms is None:
            return None
        return Issued(row.organisation_id, row.person_id)


class InstallationStore(AsyncInstallationStore):  # type: ignore[misc]
    def __init__(self, sessions: async_sessionmaker[AsyncSession], clock: Clock,
                 box: SecretBox, reads: async_sessionmaker[AsyncSession] | None = None) -> None:
        self.sessions = sessions
        # The look-ups (every request for a team not served yet, the watch of new installs):
        # pure reads, beside a writer on SQLite.
        self.reads = reads or sessions
        self.clock = clock
        self.box = box

    @property
    def logger(self) -> Any:
        return log

    async def async_save(self, installation: Installation) -> None:
        raise BoltError("an installation is saved for an organisation: save_for")

    async def save_for(self, installation: Installation, issued: Issued) -> str:
        """Store the installation for `issued`'s organisation; the key it is kept under (its
        team, or an org-wide install's enterprise). TakenOver when another organisation has
        the team."""
        # An Enterprise Grid org-wide install is kept under its enterprise id: it serves
        # every workspace of the enterprise that has no installation of its own.
        team_id = installation.team_id or (
            installation.enterprise_id if installation.is_enterprise_install else None) or ""
        if not team_id or not installation.bot_token:
            raise BoltError("the installation names no team or has no bot token")
        now = self.clock.now_ms()
        expires = installation.bot_token_expires_at
        values = {
            "enterprise_id": installation.enterprise_id, "team_name": installation.team_name,
            "app_id": installation.app_id, "bot_id": installation.bot_id,
            "bot_user_id": installation.bot_user_id,
            "bot_scopes": ",".join(installation.bot_scopes or []),
            "bot_token_sealed": self.box.seal(installation.bot_token),
            "bot_refresh_token_sealed": (self.box.seal(installation.bot_refresh_token)
                                         if installation.bot_refresh_token else None),
            # Slack's expiry is wall-clock; kept on the runtime's clock, which decides when
            # to refresh (bot.slack.installations).
            "bot_token_expires_ms": (now + 1000 * (expires - int(time.time()))
                                     if expires else None),
            "installer_person_id": issued.person_id,
            "installer_slack_user_id": installation.user_id, "updated_ms": now,
        }
        async with unit_of_work(self.sessions) as session:
            row = await session.get(SlackInstallation, team_id, with_for_update=True)
            # SLACK_BOT_TOKEN's workspace, pinned to its organisation, is connected too.
            served = await session.get(SlackWorkspace, team_id)
            connected_to = row.organisation_id if row is not None else (
                served.organisation_id if served is not None else None)
            if connected_to is not None and connected_to != issued.organisation_id:
                log.warning("slack_install_refused", team=team_id,
                            organisation=issued.organisation_id,
                            connected_to=connected_to, reason="takeover")
                raise TakenOver(team_id)
            if row is None:
                session.add(SlackInstallation(
                    team_id=team_id, organisation_id=issued.organisation_id,
                    installed_ms=now, **values))
            else:
                for name, value in values.items():
                    setattr(row, name, value)
        log.info("slack_installed", team=team_id, organisation=issued.organisation_id,
                 again=row is not None)
        return team_id

    def _bot(self, row: SlackInstallation) -> InstalledBot:
        return InstalledBot(row.team_id, row.enterprise_id, row.organisation_id,
                            self.box.open(row.bot_token_sealed), row.bot_id, row.bot_user_id,
                            row.bot_token_expires_ms if row.bot_refresh_token_sealed else None)

    async def rotate(self, team_id: str, refresh: Refresh, before_ms: int
                     ) -> InstalledBot | None:
        """Token rotation: when the team's token expires within `before_ms`, swap its refresh
        token for a new token (`refresh`: oauth.v2.access, outside any transaction) and store
        it unless another process stored one meanwhile; the installation as it is then."""
        async with self.sessions() as session:
            row = await session.get(SlackInstallation, team_id)
        if row is None:
            return None
        now = self.clock.now_ms()
        if row.bot_refresh_token_sealed is None or (row.bot_token_expires_ms or 0) > \
                now + before_ms:
            return self._bot(row)
        answer = await refresh(self.box.open(row.bot_refresh_token_sealed))
        token, expires_in = str(answer.get("access_token") or ""), answer.get("expires_in")
        if not token:
            raise BoltError("oauth.v2.access answered no token")
        async with unit_of_work(self.sessions) as session:
            result: Any = await session.execute(
                update(SlackInstallation)
                .where(SlackInstallation.team_id == team_id,
                       SlackInstallation.bot_token_sealed == row.bot_token_sealed)
                .values(bot_token_sealed=self.box.seal(token),
                        bot_refresh_token_sealed=self.box.seal(
                            str(answer.get("refresh_token") or "")) if answer.get(
                            "refresh_token") else row.bot_refresh_token_sealed,
                        bot_token_expires_ms=now + 1000 * int(expires_in or 0)
                        if expires_in else None, updated_ms=now))
        if result.rowcount:
            log.info("slack_token_rotated", team=team_id, expires_in=expires_in)
        async with self.sessions() as session:
            row = await session.get(SlackInstallation, team_id)
        return self._bot(row) if row is not None else None

    async def installed(self, team_id: str | None, enterprise_id: str | None = None
                        ) -> InstalledBot | None:
        """The installation of a team (or, without one, the enterprise's only one)."""
        async with self.reads() as session:
            row = await session.get(SlackInstallation, team_id) if team_id else None
            if row is None and enterprise_id:  # the enterprise's org-wide install
                row = await session.get(SlackInstallation, enterprise_id)
                if row is not None and row.enterprise_id != enterprise_id:
                    row = None
            if row is None and enterprise_id and not team_id:
                rows = list(await session.scalars(select(SlackInstallation).where(
                    SlackInstallation.enterprise_id == enterprise_id).limit(2)))
                row = rows[0] if len(rows) == 1 else None
        return self._bot(row) if row is not None else None

    async def all_installed(self) -> list[InstalledBot]:
        async with self.reads() as session:
            rows = await session.scalars(select(SlackInstallation).order_by(
                SlackInstallation.team_id))
            return [self._bot(row) for row in rows]

    async def forget(self, team_id: str) -> bool:
        """Delete the installation kept under `team_id` (its tokens with it): Slack said it is
        gone (`app_uninstalled`, `tokens_revoked`), and it comes back only through a new
        install. Whether there was one."""
        async with unit_of_work(self.sessions) as session:
            result: Any = await session.execute(delete(SlackInstallation).where(
                SlackInstallation.team_id == team_id))
        if result.rowcount:
            log.warning("slack_installation_deleted", team=team_id,
                        effect="its tokens are deleted; installing again restores it")
        return bool(result.rowcount)

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        await self.async_delete_installation(enterprise_id=enterprise_id, team_id=team_id)

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None,
    ) -> None:
        """bolt's deletion: the installation of the team (or the enterprise's org-wide one);
        a user's own installation is never kept here."""
        if user_id is not None:
            return
        found = await self.installed(team_id, enterprise_id)
        if found is not None:
            await self.forget(found.team_id)

    async def async_find_bot(self, *, enterprise_id: str | None, team_id: str | None,
                             is_enterprise_install: bool | None = False) -> Bot | None:
        found = await self.installed(team_id, enterprise_id)
        if found is None:
            return None
        return Bot(app_id=None, enterprise_id=found.enterprise_id, team_id=found.team_id,
                   bot_token=found.token, bot_id=found.bot_id or "",
                   bot_user_id=found.bot_user_id or "", installed_at=0.0)

    async def async_find_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        found = await self.installed(team_id, enterprise_id)
        if found is None or user_id is not None:
            return None
        return Installation(user_id="", enterprise_id=found.enterprise_id,
                            team_id=found.team_id, bot_token=found.token,
                            bot_id=found.bot_id, bot_user_id=found.bot_user_id)
