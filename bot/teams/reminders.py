"""Staff reminders in Teams: a channel of the ground's scheduler (`timebot.notify.scheduler`,
which decides who is reminded of which period, as it does for mail), rendered (bot.chat.nudges'
staff nudge with "Submit now") to a person linked in Teams, in their language and formats;
push off in their notification settings: none. Queued once under
`teams-reminder:<dedupe key>`. The digests are the nudges loop's (bot.teams.nudges):
`daily_digests` queues none here."""

from __future__ import annotations

import contextlib
from contextlib import AbstractAsyncContextManager

from bot.chat.approvals import status_word
from bot.chat.nudges import staff_nudge_text, submit_now_message
from bot.chat.reach import reach
from bot.teams import cards, render
from bot.teams.installs import TeamsInstaller
from bot.teams.outgoing import Recipient, TeamsOutbox
from bot.teams.tenants import TeamsTenants
from timebot import l10n
from timebot.notify.decisions import PeriodReminder
from timebot.process.runtime import Runtime


def reminder_key(dedupe_key: str) -> str:
    return f"teams-reminder:{dedupe_key}"


class TeamsReminders:
    """Teams' `timebot.notify.decisions.Channel`."""

    def __init__(self, runtime: Runtime, tenants: TeamsTenants, outbox: TeamsOutbox,
                 installer: TeamsInstaller | None = None) -> None:
        self.runtime, self.tenants, self.outbox = runtime, tenants, outbox
        self.installer = installer  # reaches who never wrote (bot.teams.installs)

    async def sent_among(self, dedupe_keys: list[str]) -> set[str]:
        queued = await self.outbox.keys_queued([reminder_key(key) for key in dedupe_keys])
        return {key for key in dedupe_keys if reminder_key(key) in queued}

    def bulk(self) -> AbstractAsyncContextManager[object]:
        return contextlib.nullcontext()  # each reminder's card is queued as it comes

    async def period_reminder(self, reminder: PeriodReminder) -> bool:
        person_id = str(reminder.person.get("id") or "")
        user = await self.tenants.user_of_person(reminder.organisation_id, person_id)
        if user is None and self.installer is not None:  # never wrote: installed, then sent
            self.installer.later(reminder.organisation_id, person_id,
                                 lambda: self.period_reminder(reminder))
        if user is None or not user.conversation_id or not user.service_url:
            return False
        reader = await reach(self.runtime, reminder.organisation_id, person_id, "reminder")
        if reader is None:
            return False
        period = reminder.period
        with l10n.using(reader):
            text = staff_nudge_text(status_word(reminder.status) or "draft", period.start_ms,
                                    period.end_ms, self.runtime.clock.now_ms())
            said = submit_now_message(text, period.start_ms, period.end_ms,
                                      reminder_key(reminder.dedupe_key))
            card = render.card_of(said)
        return await self.outbox.send(
            Recipient(user.tenant_id, reminder.organisation_id, user.conversation_id,
                      user.service_url), cards.message(card, text),
            key=reminder_key(reminder.dedupe_key))

    async def daily_digests(self) -> int:
        return 0
