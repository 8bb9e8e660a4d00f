"""Timebot's section of the account page: the person's Slack identity and their notification
preferences (approval e-mails instantly or as a daily digest; Slack nudges instantly, as a
digest or off), read from and saved to timebot's state. The service's /account shows it and
hands its form to `handle` once Origin and the CSRF token are checked (the shell wires it)."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.db import unit_of_work
from timebot.notify.approvals import MODES, preference, set_preference
from timebot.runtime import Runtime
from timebot.state.models import PersonLink, SlackNudgePreference

TEMPLATES = Environment(
    loader=FileSystemLoader(str(Path(__file__).resolve().parent / "templates")),
    autoescape=select_autoescape(default=True),
)
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


class PreferencesSection:
    path = "/account/notifications"
    notices = {"prefs": "Your notification preferences were saved."}

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def render(self, organisation_id: str, person_id: str, csrf: str) -> str:
        async with self.runtime.state_sessions() as state:
            slack_user_id = await slack_user_of(state, person_id)
            chat = await state.get(SlackNudgePreference, (organisation_id, person_id))
        mail_mode = await preference(self.runtime, organisation_id, person_id)
        return TEMPLATES.get_template("preferences.html").render(
            path=self.path, csrf=csrf, slack_user_id=slack_user_id, mail_mode=mail_mode,
            chat_mode=chat_mode_of(chat) if slack_user_id else None,
        )

    async def handle(self, organisation_id: str, person_id: str, fields: dict[str, str]) -> str:
        mail_mode = fields.get("mail", "")
        if mail_mode not in MODES:
            return f'Invalid "mail": choose one of {", ".join(MODES)}.'
        chat = fields.get("chat")
        if chat is not None and chat not in CHAT_MODES:
            return f'Invalid "chat": choose one of {", ".join(CHAT_MODES)}.'
        await set_preference(self.runtime, organisation_id, person_id, mail_mode)
        if chat is not None:
            async with unit_of_work(self.runtime.state_sessions) as state:
                slack_user_id = await slack_user_of(state, person_id)
                if slack_user_id is None:
                    return "Link your Slack account first to choose chat notifications."
                pref = await state.get(SlackNudgePreference, (organisation_id, person_id))
                if pref is None:
                    pref = SlackNudgePreference(
                        organisation_id=organisation_id, person_id=person_id,
                        slack_user_id=slack_user_id, off=False, digest=False, nudged={})
                    state.add(pref)
                for name, value in CHAT_MODES[chat].items():
                    setattr(pref, name, value)
        return "prefs"
