"""The "Submit now" button under a staff nudge or a manager's reminder: its blocks, and the
click that submits the period as the person and turns that DM into the outcome."""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.chat.approvals import period_text
from bot.chat.nudges import SUBMIT_NOW, submit_now_message, submit_value
from bot.chat.values import BAD_BUTTON, BadValue, action_value
from bot.slack.deps import SlackDeps
from bot.slack.mrkdwn import escape
from bot.slack.render import blocks_of
from bot.slack.replies import action_channel, ephemeral, person_or_prompt
from timebot import l10n
from timebot.errors import PermissionRefused, ServiceRequestError
from timebot.l10n import _
from timebot.l10n.loading import load_localisation
from timebot.state.models import SlackOutgoing

log = structlog.get_logger("timebot.slack.submit_now")

SUBMIT = """
mutation Submit($person: SvcId!, $start: SvcTimestamp!, $end: SvcTimestamp!) {
  submitTimesheet(personId: $person, startTime: $start, endTime: $end) { id status }
}"""


def submit_blocks(text: str, start_ms: int, end_ms: int, key: str) -> list[dict[str, Any]]:
    """A nudge with "Submit now" (bot.chat.nudges.submit_now_message) as Block Kit."""
    return blocks_of(submit_now_message(text, start_ms, end_ms, key))


class SubmitNowPart:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def on_submit_now(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user_id = str((body.get("user") or {}).get("id", ""))
        channel = action_channel(body)
        person = await person_or_prompt(self.deps, user_id, channel)
        if person is None:
            return
        try:
            start, end, key = submit_value(action_value(body))
        except BadValue as error:
            log.warning("slack_button_unreadable", user=user_id, error=str(error))
            await ephemeral(self.deps.web, channel, user_id, BAD_BUTTON)
            return
        with l10n.using(await load_localisation(self.deps.runtime.client, person.apikey,
                                                person.person_id)):  # the clicker's
            try:
                await self.deps.runtime.client.execute(
                    SUBMIT, {"person": person.person_id, "start": int(start), "end": int(end)},
                    apikey=person.apikey)
            except (PermissionRefused, ServiceRequestError) as error:
                await ephemeral(self.deps.web, channel, user_id,
                                _("Not submitted: {why}").format(why=escape(error)))
                return
            text = _("Submitted your timesheet for {period}.").format(
                period=period_text(int(start), int(end)))
        row = await self._nudge_message(body, user_id, channel, key)
        if row is not None:
            await self.deps.sender.update_row(
                row.id, text, [{"type": "section", "text": {"type": "mrkdwn", "text": text}}])
        else:
            await ephemeral(self.deps.web, channel, user_id, text)

    async def _nudge_message(
        self, body: dict[str, Any], user_id: str, channel: str, key: str | None
    ) -> SlackOutgoing | None:
        """The DM whose button was clicked. By its dedupe key: the row exists before the DM is
        sent, while Slack's answer (channel, ts) is recorded only after it (with the sender's
        next flush), so a prompt click must not depend on it. Buttons without a key (older
        messages) by (channel, ts)."""
        if key is not None:
            row = await self.deps.sender.queued_with_key(key)
            return row if row is not None and row.channel in (user_id, channel) else None
        message_ts = str((body.get("container") or {}).get("message_ts") or "")
        return await self.deps.sender.posted(channel, message_ts) if message_ts else None


def register(app: AsyncApp, deps: SlackDeps) -> SubmitNowPart:
    part = SubmitNowPart(deps)
    app.action(SUBMIT_NOW)(part.on_submit_now)
    return part
