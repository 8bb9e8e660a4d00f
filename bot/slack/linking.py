"""Linking a Slack user to a person of the service with their own API key: the prompt shown to
an unlinked user, the modal asking for the key, `/timesheet link` and the "Link my account"
button that open it, and the modal's submission (the words: bot.chat.linking)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.chat import linking as chat
from bot.chat.person import NotIdentified
from bot.slack.commands import CommandContext
from bot.slack.deps import SlackDeps
from bot.slack.render import blocks_of
from timebot.errors import InvalidCredentials, ServiceRequestError

LINK_CALLBACK = "timebot_link"


def link_prompt(message: str, can_link: bool) -> list[dict[str, Any]]:
    return blocks_of(chat.link_prompt(message, can_link))


def link_view() -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": LINK_CALLBACK,
        "title": {"type": "plain_text", "text": chat.FORM_TITLE},
        "submit": {"type": "plain_text", "text": chat.FORM_SUBMIT},
        "close": {"type": "plain_text", "text": chat.FORM_CANCEL},
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": chat.FORM_TEXT}},
            {
                "type": "input", "block_id": "apikey",
                "label": {"type": "plain_text", "text": chat.FORM_LABEL},
                "element": {"type": "plain_text_input", "action_id": "value"},
            },
        ],
    }


async def link_command(context: CommandContext) -> None:
    """`/timesheet link`; the slash-command listener opens the modal for unlinked users too."""
    await context.open_view(link_view())


class LinkingPart:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def on_link_button(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        await self.deps.web.views_open(trigger_id=str(body.get("trigger_id", "")),
                                       view=link_view())

    async def on_link_submit(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        user_id = str((body.get("user") or {}).get("id", ""))
        values = ((body.get("view") or {}).get("state") or {}).get("values") or {}
        apikey = str(((values.get("apikey") or {}).get("value") or {}).get("value") or "")
        if not apikey.strip():
            await ack(response_action="errors", errors={"apikey": chat.NO_KEY})
            return
        try:
            person = await self.deps.identity.link(user_id, apikey)
        except (InvalidCredentials, ServiceRequestError, NotIdentified) as error:
            await ack(response_action="errors", errors={"apikey": chat.link_refusal(error)})
            return
        await ack()
        await self.deps.sender.post(user_id, chat.linked_text(person), key=None)


def register(app: AsyncApp, deps: SlackDeps) -> LinkingPart:
    part = LinkingPart(deps)
    deps.registry.add("/timesheet", "link", link_command, "link your own API key")
    app.action(chat.LINK_ACTION)(part.on_link_button)
    app.view(LINK_CALLBACK)(part.on_link_submit)
    return part
