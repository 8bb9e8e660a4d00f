"""Neutral messages (bot.chat.message) as Block Kit, and Slack's markup (bot.chat.markup).

A block's text is a `mrkdwn` section (a plain one escaped, and cut to Slack's 3000 characters
before), its actions an `actions` block of buttons (`block_id` the block's `group`); a button's
text is cut to Slack's 75 characters, its value to 2000. `SLACK` is the markup the neutral
texts are written with for Slack: mrkdwn's escape and `<!date^…>` times."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.chat.message import Action, Block, Confirm, Message
from bot.slack.mrkdwn import escape
from timebot import l10n
from timebot.l10n import _

SECTION_LIMIT = 2900
LABEL_LIMIT = 75
VALUE_LIMIT = 2000


def slack_time(ms: int) -> str:
    """A time every reader sees in their own time zone."""
    seconds = ms // 1000
    fallback = l10n.format_datetime(ms, replace(l10n.current(), time_zone="UTC"))
    shown = _("{date} at {time}").format(date="{date_short_pretty}", time="{time}")
    return f"<!date^{seconds}^{shown}|{fallback}>"


class SlackMarkup:
    """mrkdwn: `&`, `<`, `>` escaped; a moment as `<!date^…>` (each reader's own zone)."""

    def escape(self, text: Any) -> str:
        return escape(text)

    def time(self, ms: int) -> str:
        return slack_time(ms)


SLACK = SlackMarkup()


def text_of(message: Message) -> str:
    """The message's top-level `text` (mrkdwn: a plain one escaped)."""
    return escape(message.text) if message.plain else message.text


def section(text: str, *, plain: bool = False) -> dict[str, Any]:
    shown = escape(text[:SECTION_LIMIT]) if plain else text
    return {"type": "section", "text": {"type": "mrkdwn", "text": shown}}


def confirm_of(confirm: Confirm) -> dict[str, Any]:
    dialog: dict[str, Any] = {
        "title": {"type": "plain_text", "text": confirm.title},
        "text": {"type": "mrkdwn", "text": confirm.text},
        "confirm": {"type": "plain_text", "text": confirm.yes},
        "deny": {"type": "plain_text", "text": confirm.no},
    }
    if confirm.style:
        dialog["style"] = confirm.style
    return dialog


def button(action: Action) -> dict[str, Any]:
    element: dict[str, Any] = {"type": "button", "action_id": action.id,
                               "text": {"type": "plain_text", "text": action.label[:LABEL_LIMIT]}}
    if action.url is not None:
        element["url"] = action.url
    if action.value:
        element["value"] = action.value[:VALUE_LIMIT]
    if action.style:
        element["style"] = action.style
    if action.confirm is not None:
        element["confirm"] = confirm_of(action.confirm)
    return element


def actions_block(block: Block) -> dict[str, Any]:
    rendered: dict[str, Any] = {"type": "actions"}
    if block.group is not None:
        rendered["block_id"] = block.group
    rendered["elements"] = [button(action) for action in block.actions]
    return rendered


def blocks_of(message: Message) -> list[dict[str, Any]]:
    """The message's blocks as Block Kit: each text a section, its actions under it."""
    rendered: list[dict[str, Any]] = []
    for block in message.blocks:
        if block.text:
            rendered.append(section(block.text, plain=block.plain))
        if block.actions:
            rendered.append(actions_block(block))
    return rendered
