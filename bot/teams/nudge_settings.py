"""An approver's nudges in Teams (table `teams_nudge_preferences`): off until turned on again,
or snoozed until a moment. Set by the controls under a nudge or digest card
(bot.teams.nudge_controls) and by `timesheet nudges on|off` typed in the personal chat (the
words of Slack's `/timesheet nudges`; a leading `/` is taken too); read by bot.teams.nudges
before anything goes. What each choice stores and says is bot.chat.nudges'."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from bot.chat.message import Message, reply
from bot.chat.nudges import COMMAND_ANSWERS, COMMAND_CHANGES
from bot.chat.person import ChatPerson
from bot.chat.quick_entry import QuickEntry, Run
from timebot.l10n import _
from timebot.process.runtime import Runtime
from timebot.state.db import insert_ignoring, unit_of_work
from timebot.state.teams_models import TeamsNudgePreference


@dataclass(frozen=True)
class NudgeState:
    """What is stored for the approver now (bot.chat.nudge_schedule.NudgeSetting)."""

    off: bool
    snoozed_until_ms: int | None


class TeamsNudgeSettings:
    """The stored settings; a person without a row has nudges on."""

    def __init__(self, runtime: Runtime) -> None:
        self.sessions, self.reads = runtime.state_sessions, runtime.read_sessions
        self.clock = runtime.clock

    async def get(self, organisation_id: str, person_id: str) -> NudgeState | None:
        async with self.reads() as session:
            row = await session.get(TeamsNudgePreference, (organisation_id, person_id))
            return None if row is None else NudgeState(row.off, row.snoozed_until_ms)

    async def change(self, organisation_id: str, person_id: str, values: Mapping[str, Any],
                     by: str | None = None) -> tuple[NudgeState, bool]:
        """Store `values` (columns of the table); (what is stored now, whether it changed):
        the invoke `by` names, stored already (Teams' retry, the same activity twice),
        changes nothing and answers what it stored."""
        async with unit_of_work(self.sessions) as session:
            await session.execute(
                insert_ignoring(session, TeamsNudgePreference, ("organisation_id", "person_id")),
                {"organisation_id": organisation_id, "person_id": person_id, "off": False,
                 "snoozed_until_ms": None, "changed_by": None,
                 "changed_ms": self.clock.now_ms()})
            row = (await session.scalars(select(TeamsNudgePreference).where(
                TeamsNudgePreference.organisation_id == organisation_id,
                TeamsNudgePreference.person_id == person_id).with_for_update())).one()
            changed = by is None or row.changed_by != by
            if changed:
                for name, value in values.items():
                    setattr(row, name, value)
                row.changed_by, row.changed_ms = by, self.clock.now_ms()
            return NudgeState(row.off, row.snoozed_until_ms), changed


def nudges_command(settings: TeamsNudgeSettings) -> Run:
    """`timesheet nudges on|off`: the approver's nudges back on (the snooze ended too), or off."""

    async def run(_entry: QuickEntry, person: ChatPerson, args: str) -> Message:
        word = args.strip().lower()
        if word not in COMMAND_CHANGES:
            return reply(_("Write `timesheet nudges on` or `timesheet nudges off`."))
        await settings.change(person.organisation_id, person.person_id, COMMAND_CHANGES[word])
        return reply(_(COMMAND_ANSWERS[word]))

    return run
