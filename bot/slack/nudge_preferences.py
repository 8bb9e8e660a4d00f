"""An approver's nudge settings: stored per person (off, snoozed until, daily digest, when
each request was last nudged), the buttons under a nudge that change them (Snooze 1 hour,
Until tomorrow, Turn nudges off) and `/timesheet nudges on|off|digest|instant`."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.chat import nudges as chat_nudges
from bot.chat.nudges import (
    COMMAND_ANSWERS,
    COMMAND_CHANGES,
    CONTROLS,
    control_change,
    control_text,
    control_value,
)
from bot.chat.values import BadValue, action_value
from bot.slack.commands import CommandContext
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.render import SLACK, actions_block
from bot.slack.replies import action_channel, ephemeral, person_or_prompt
from timebot import l10n
from timebot.l10n import N_, _
from timebot.l10n.loading import load_localisation
from timebot.state.db import unit_of_work
from timebot.state.models import SlackNudgePreference


def nudge_controls() -> dict[str, Any]:
    return actions_block(chat_nudges.nudge_controls())


class NudgePreferences:
    """The stored settings; a person without a row gets the defaults (on, one nudge per
    request)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession],
                 reads: async_sessionmaker[AsyncSession] | None = None) -> None:
        self.sessions = sessions
        self.reads = reads or sessions

    async def get(
        self, organisation_id: str, person_id: str, slack_user: str
    ) -> SlackNudgePreference:
        # The nudge loops ask for everyone's every tick: a row stored is read beside any
        # writer; only a person without one waits for the write lock (to store the defaults).
        async with self.reads() as session:
            found = await session.get(SlackNudgePreference, (organisation_id, person_id))
        if found is not None:
            return found
        async with unit_of_work(self.sessions) as session:
            pref = await session.get(SlackNudgePreference, (organisation_id, person_id))
            if pref is None:
                pref = SlackNudgePreference(
                    organisation_id=organisation_id, person_id=person_id,
                    slack_user_id=slack_user, off=False, digest=False, nudged={})
                session.add(pref)
            return pref

    async def update(
        self, organisation_id: str, person_id: str, slack_user: str, **values: Any
    ) -> None:
        await self.get(organisation_id, person_id, slack_user)
        async with unit_of_work(self.sessions) as session:
            pref = await session.get(SlackNudgePreference, (organisation_id, person_id))
            assert pref is not None
            for name, value in values.items():
                setattr(pref, name, value)


ANSWERS = {**COMMAND_ANSWERS,
           "digest": N_("You get one digest a day at 09:00 of what waits for you."),
           "instant": N_("You get a nudge per request again.")}


class NudgeSettingsPart:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps
        self.preferences = NudgePreferences(deps.runtime.state_sessions,
                                            deps.runtime.read_sessions)

    async def set_preference(self, context: CommandContext) -> None:
        word = context.args.strip().lower()
        changes: dict[str, dict[str, Any]] = {
            **COMMAND_CHANGES,
            "digest": {"digest": True, "off": False},
            "instant": {"digest": False, "off": False},
        }
        person = context.person
        with l10n.using(await self._local(person)):
            if word not in changes:
                await context.respond(_("Use `/timesheet nudges on`, `off`, `digest` or "
                                        "`instant`."))
                return
            await self.preferences.update(person.organisation_id, person.person_id,
                                          person.slack_user_id, **changes[word])
            await context.respond(_(ANSWERS[word]))

    async def _local(self, person: SlackPerson) -> l10n.Localisation:
        return await load_localisation(self.deps.runtime.client, person.apikey, person.person_id)

    async def on_control(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """Snooze 1 hour, Until tomorrow, Turn nudges off: stored for the clicking user; an
        ephemeral answer says what they chose."""
        await ack()
        user_id = str((body.get("user") or {}).get("id", ""))
        try:
            choice, _card = control_value(action_value(body) or "1h")
        except BadValue:
            return
        person = await person_or_prompt(self.deps, user_id, action_channel(body))
        if person is None:
            return
        change = control_change(choice, self.deps.runtime.clock.now_ms(), person.tz)
        await self.preferences.update(person.organisation_id, person.person_id, user_id,
                                      **change)
        with l10n.using(await self._local(person)):
            text = control_text(choice, change.get("snoozed_until_ms"), SLACK)
        await ephemeral(self.deps.web, action_channel(body), user_id, text)


def register(app: AsyncApp, deps: SlackDeps) -> NudgeSettingsPart:
    part = NudgeSettingsPart(deps)
    deps.registry.add("/timesheet", "nudges", part.set_preference,
                      "on | off | digest | instant: your approval nudges")
    for action_id in CONTROLS:
        app.action(action_id)(part.on_control)
    return part
