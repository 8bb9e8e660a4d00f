"""Quick time entry in Slack: `/time …` and `/timesheet submit|status` (issue 6), the Slack
adapter of bot.chat.quick_entry (which says what each sub-command does and answers).

`register` adds the sub-commands to bot.slack.commands' registry (each answer rendered as Block
Kit, ephemeral to the caller), and adds to the Slack app the listeners of the answer's buttons
(Undo, Edit, a candidate) and the Edit modal. Every answer is in the person's language and
formats (`speaking`: their localisation, read with their key, in force around the handler).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.chat.person import NotIdentified, speaking
from bot.chat.quick_entry import EDIT, PICK_PATTERN, UNDO, QuickEntry, Run, add_commands
from bot.slack.commands import CommandContext, CommandRegistry, Handler
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.mrkdwn import escape
from bot.slack.render import blocks_of
from timebot import l10n
from timebot.l10n import _

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncRespond

    from timebot.runtime import Runtime

__all__ = ["EDIT", "EDIT_VIEW", "UNDO", "register"]

EDIT_VIEW = "timebot_time_edit_view"
SOURCE = "slack"


def quick(runtime: Runtime) -> QuickEntry:
    return QuickEntry(runtime, source=SOURCE)


def slack_handler(run: Run) -> Handler:
    """A neutral sub-command as the registry's handler: run in the caller's language, its
    answer rendered as Block Kit."""

    async def handle(ctx: CommandContext) -> None:
        with l10n.using(await speaking(ctx.runtime, ctx.person)):
            answer = await run(quick(ctx.runtime), ctx.person, ctx.args)
            await ctx.respond(answer.text, blocks_of(answer) or None)

    return handle


def add_slack_commands(registry: CommandRegistry) -> None:
    add_commands(registry, slack_handler)


# --- buttons and the Edit modal ---------------------------------------------------------------


def edit_view(record_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": EDIT_VIEW,
        "private_metadata": record_id,
        "title": {"type": "plain_text", "text": _("Edit entry")},
        "submit": {"type": "plain_text", "text": _("Save")},
        "close": {"type": "plain_text", "text": _("Cancel")},
        "blocks": [{
            "type": "input", "block_id": "entry",
            "label": {"type": "plain_text", "text": _("Entry")},
            "element": {"type": "plain_text_input", "action_id": "value",
                        "initial_value": text},
        }],
    }


class TimeButtons:
    """The listeners of the confirmation's buttons and of the Edit modal."""

    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def _person(self, body: dict[str, Any], respond: AsyncRespond) -> SlackPerson | None:
        user_id = str((body.get("user") or {}).get("id", ""))
        try:
            return await self.deps.identity.resolve(user_id)
        except NotIdentified as refusal:
            await respond(text=refusal.message, response_type="ephemeral",
                          replace_original=False)
            return None

    @staticmethod
    def _value(body: dict[str, Any]) -> str:
        actions = body.get("actions") or [{}]
        return str(actions[0].get("value") or "")

    async def on_undo(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
                       ) -> None:
        await ack()
        person = await self._person(body, respond)
        if person is None:
            return
        with l10n.using(await speaking(self.deps.runtime, person)):
            text = await quick(self.deps.runtime).undo_record(person, self._value(body))
        await respond(text=escape(text), response_type="ephemeral", replace_original=True)

    async def on_edit(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
                       ) -> None:
        await ack()
        person = await self._person(body, respond)
        if person is None:
            return
        record_id = self._value(body)
        with l10n.using(await speaking(self.deps.runtime, person)):
            text = await quick(self.deps.runtime).reading_of(person, record_id)
            if not text:
                await respond(text=_("That entry is gone."), response_type="ephemeral",
                              replace_original=False)
                return
            view = edit_view(record_id, text)
        await self.deps.web.views_open(trigger_id=str(body.get("trigger_id", "")), view=view)

    async def on_pick(self, ack: AsyncAck, body: dict[str, Any], respond: AsyncRespond
                       ) -> None:
        await ack()
        person = await self._person(body, respond)
        if person is None:
            return
        with l10n.using(await speaking(self.deps.runtime, person)):
            answer = await quick(self.deps.runtime).log(person, self._value(body))
        await respond(text=escape(answer.text), blocks=blocks_of(answer),
                      response_type="ephemeral", replace_original=True)

    async def on_edit_submit(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        user_id = str((body.get("user") or {}).get("id", ""))
        view = body.get("view") or {}
        record_id = str(view.get("private_metadata") or "")
        values = (view.get("state") or {}).get("values") or {}
        text = str(((values.get("entry") or {}).get("value") or {}).get("value") or "")
        try:
            person = await self.deps.identity.resolve(user_id)
        except NotIdentified as refusal:
            await ack(response_action="errors", errors={"entry": refusal.message[:150]})
            return
        with l10n.using(await speaking(self.deps.runtime, person)):
            message, outcome = await quick(self.deps.runtime).replace(person, record_id,
                                                                      text)
        if outcome is None or outcome.record_id is None:
            await ack(response_action="errors", errors={"entry": message[:150]})
            return
        await ack()
        await self.deps.sender.post(user_id, escape(message), key=None)


def register(app: AsyncApp, deps: SlackDeps) -> TimeButtons:
    """Add the commands to the registry, and the buttons' and the Edit modal's listeners to the
    Slack app."""
    add_slack_commands(deps.registry)
    buttons = TimeButtons(deps)
    app.action(UNDO)(buttons.on_undo)
    app.action(EDIT)(buttons.on_edit)
    app.action(PICK_PATTERN)(buttons.on_pick)
    app.view(EDIT_VIEW)(buttons.on_edit_submit)
    return buttons
