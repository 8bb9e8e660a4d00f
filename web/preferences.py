"""Timebot's section of the account page: the person's Slack identity and their notification
preferences (approval e-mails instantly or as a daily digest; Slack nudges instantly, as a
digest or off), read from and saved to timebot's state. The service's /account shows it and
hands its form to `handle` once Origin and the CSRF token are checked (the shell wires it).
The section and its refusals are in the person's language (`timebot.l10n`; the page around
it is the service's)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.db import unit_of_work
from timebot import l10n
from timebot.errors import TimebotError
from timebot.l10n import _
from timebot.l10n.loading import load_localisation
from timebot.notify.approvals import MODES, preference, set_preference
from timebot.process.runtime import Runtime
from timebot.state.models import PersonLink, SlackNudgePreference, SlackWorkspace
from timebot.state.slack_models import SlackInstallation
from timebot.state.teams_models import TeamsTenant

TEMPLATES = Environment(
    loader=FileSystemLoader(str(Path(__file__).resolve().parent / "templates")),
    autoescape=select_autoescape(default=True),
    extensions=["jinja2.ext.i18n"],
)
TEMPLATES.install_gettext_callables(l10n._, l10n.ngettext, newstyle=True)  # type: ignore[attr-defined]
CHAT_MODES = {
    "instant": {"off": False, "digest": False},
    "digest": {"off": False, "digest": True},
    "off": {"off": True},
}


def chat_mode_of(pref: SlackNudgePreference | None) -> str:
    if pref is None:
        return "instant"
    if pref.off:
        return "off"
    return "digest" if pref.digest else "instant"


async def slack_user_of(state: AsyncSession, person_id: str) -> str | None:
    return await state.scalar(
        select(PersonLink.slack_user_id).where(PersonLink.person_id == person_id).limit(1)
    )


async def workspaces_of(state: AsyncSession, organisation_id: str) -> list[dict[str, Any]]:
    """The Slack workspaces installed for an organisation (OAuth), and whether each still is
    (app_uninstalled, tokens_revoked, a refused token disable one); then those whose
    installation was deleted when Slack said it is gone (only their state is left)."""
    rows = (await state.execute(
        select(SlackInstallation, SlackWorkspace)
        .join(SlackWorkspace, SlackWorkspace.team_id == SlackInstallation.team_id,
              isouter=True)
        .where(SlackInstallation.organisation_id == organisation_id)
        .order_by(SlackInstallation.team_id))).all()
    listed = [{"name": installed.team_name or installed.team_id, "team_id": installed.team_id,
               "active": workspace is None or workspace.uninstalled_ms is None,
               "reason": workspace.uninstalled_reason if workspace is not None else None}
              for installed, workspace in rows]
    gone = await state.scalars(
        select(SlackWorkspace)
        .where(SlackWorkspace.organisation_id == organisation_id,
               SlackWorkspace.uninstalled_ms.is_not(None),
               SlackWorkspace.team_id.not_in([w["team_id"] for w in listed]))
        .order_by(SlackWorkspace.team_id))
    return listed + [{"name": workspace.team_id, "team_id": workspace.team_id,
                      "active": False, "reason": workspace.uninstalled_reason}
                     for workspace in gone]


class PreferencesSection:
    path = "/account/notifications"
    notices = {"prefs": "Your notification preferences were saved.",
               "slack": "The Slack workspace is connected to your organisation.",
               "teams": "The Microsoft 365 tenant is connected to your organisation."}

    async def localisation(self, organisation_id: str, person_id: str) -> l10n.Localisation:
        """The person's language and formats (English when they cannot be read: the service
        away, the subscription inactive — the page still shows, and says what it can)."""
        try:
            key = await self.runtime.directory.integration_key(organisation_id)
            return await load_localisation(self.runtime.client, key, person_id)
        except TimebotError:
            return l10n.ENGLISH

    def __init__(self, runtime: Runtime,
                 is_admin: Callable[[str, str], Awaitable[bool]] | None = None, *,
                 slack_installs: bool = True, teams: bool = False) -> None:
        self.runtime = runtime
        # With OAuth installs (SLACK_CLIENT_ID): whether a person administers their
        # organisation, who alone sees "Add to Slack".
        self.is_admin = is_admin
        # What an administrator is offered: "Add to Slack" (SLACK_CLIENT_ID), "Connect
        # Microsoft Teams" (TEAMS_APP_ID).
        self.slack_installs, self.teams = slack_installs, teams

    async def render(self, organisation_id: str, person_id: str, csrf: str) -> str:
        admin = self.is_admin is not None and await self.is_admin(organisation_id, person_id)
        async with self.runtime.state_sessions() as state:
            slack_user_id = await slack_user_of(state, person_id)
            chat = await state.get(SlackNudgePreference, (organisation_id, person_id))
            workspaces = await workspaces_of(state, organisation_id) if admin else []
            tenant = (await teams_tenant_of(state, organisation_id)
                      if admin and self.teams else None)
        mail_mode = await preference(self.runtime, organisation_id, person_id)
        with l10n.using(await self.localisation(organisation_id, person_id)):
            return TEMPLATES.get_template("preferences.html").render(
                path=self.path, csrf=csrf, slack_user_id=slack_user_id, mail_mode=mail_mode,
                chat_mode=chat_mode_of(chat) if slack_user_id else None,
                install_url=("/slack/install?" + urlencode({"organisation": organisation_id})
                             if admin and self.slack_installs else None),
                workspaces=workspaces,
                teams_connect_url=("/teams/connect?" + urlencode(
                    {"organisation": organisation_id}) if admin and self.teams else None),
                teams_tenant=tenant,
            )

    async def handle(self, organisation_id: str, person_id: str, fields: dict[str, str]) -> str:
        with l10n.using(await self.localisation(organisation_id, person_id)):
            return await self._handle(organisation_id, person_id, fields)

    async def _handle(self, organisation_id: str, person_id: str, fields: dict[str, str]
                      ) -> str:
        mail_mode = fields.get("mail", "")
        if mail_mode not in MODES:
            return _('Invalid "{field}": choose one of {values}.').format(
                field="mail", values=", ".join(MODES))
        chat = fields.get("chat")
        if chat is not None and chat not in CHAT_MODES:
            return _('Invalid "{field}": choose one of {values}.').format(
                field="chat", values=", ".join(CHAT_MODES))
        await set_preference(self.runtime, organisation_id, person_id, mail_mode)
        if chat is not None:
            async with unit_of_work(self.runtime.state_sessions) as state:
                slack_user_id = await slack_user_of(state, person_id)
                if slack_user_id is None:
                    return _("Link your Slack account first to choose chat notifications.")
                pref = await state.get(SlackNudgePreference, (organisation_id, person_id))
                if pref is None:
                    pref = SlackNudgePreference(
                        organisation_id=organisation_id, person_id=person_id,
                        slack_user_id=slack_user_id, off=False, digest=False, nudged={})
                    state.add(pref)
                for name, value in CHAT_MODES[chat].items():
                    setattr(pref, name, value)
        return "prefs"


async def teams_tenant_of(state: AsyncSession, organisation_id: str) -> TeamsTenant | None:
    """The Microsoft 365 tenant the organisation connected (None: none)."""
    return (await state.execute(select(TeamsTenant).where(
        TeamsTenant.organisation_id == organisation_id))).scalar_one_or_none()
