"""The neutral chat messages (bot.chat.message) as Adaptive Cards: what a chat says is written
once in bot.chat; Teams only renders it.

- A block's text is a TextBlock: the chat markup's `*bold*` becomes Markdown's `**bold**`;
  outside text was escaped by `TEAMS` (the Teams `Markup`: Markdown's specials, a moment in the
  reader's zone and formats); a plain text is escaped whole.
- A block's actions are an ActionSet under its text, each a Universal Action
  (`Action.Execute`, card version 1.4) whose verb is the action's id and whose data carries
  its value: `{"value": …}`, read back with `value_of`. Reject asks its reason in the card
  (a required Input.Text, sent with the click); an action with a `confirm` shows the question
  and the confirming button first (Action.ShowCard): nothing counts before it; a `url` is an
  Action.OpenUrl.
- `refresh`: Universal Actions' refresh naming the Teams users who get the current card when
  they see it (Teams asks the bot, verb `refresh`, with the card's request)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from bot.chat.approvals import REJECT
from bot.chat.message import Action, Message
from bot.teams.cards import (
    REASON_INPUT,
    REFRESH,
    VERSION,
    BadCard,
    card,
    escape,
    text_block,
    when,
)
from timebot.l10n import _

MAX_REFRESH_USERS = 60  # Teams refreshes a card automatically for at most 60 users
MAX_VALUE = 2000
_BOLD = re.compile(r"(?<![\\*])\*(?=\S)(.+?)(?<=[^\s\\])\*(?!\*)")


class TeamsMarkup:
    """bot.chat.markup.Markup for Teams: Markdown escaped, moments in the reader's zone."""

    def escape(self, text: Any) -> str:
        return escape(str(text))

    def time(self, ms: int) -> str:
        return when(ms)


TEAMS = TeamsMarkup()


def markdown(text: str) -> str:
    """Chat markup (`*bold*`, outside text escaped) as Adaptive Card Markdown."""
    return _BOLD.sub(r"**\1**", text)


def _data(action: Action) -> dict[str, Any]:
    return {"value": action.value}


def action_of(action: Action) -> dict[str, Any]:
    if action.url:
        return {"type": "Action.OpenUrl", "title": action.label, "url": action.url}
    execute: dict[str, Any] = {"type": "Action.Execute", "verb": action.id,
                               "title": action.label, "data": _data(action),
                               "associatedInputs": "none"}
    if action.style == "primary":
        execute["style"] = "positive"
    elif action.style == "danger":
        execute["style"] = "destructive"
    if action.id == REJECT:  # the reason, required, typed into the card
        return {"type": "Action.ShowCard", "title": action.label, "card": {
            "type": "AdaptiveCard", "version": VERSION,
            "body": [{"type": "Input.Text", "id": REASON_INPUT, "isMultiline": True,
                      "isRequired": True, "label": _("Reason (the person sees it)"),
                      "errorMessage": _("Reason (the person sees it)"), "maxLength": 2000}],
            "actions": [{**execute, "title": _("Reject timesheet"),
                         "associatedInputs": "auto"}]}}
    if action.confirm is not None:  # asked first: the click shows the question
        confirm = action.confirm
        return {"type": "Action.ShowCard", "title": action.label, "card": {
            "type": "AdaptiveCard", "version": VERSION,
            "body": [text_block(markdown(confirm.text), weight="Bolder")],
            "actions": [{**execute, "title": confirm.yes}]}}
    return execute


def card_of(message: Message, refresh: dict[str, Any] | None = None) -> dict[str, Any]:
    """The message as an Adaptive Card (its blocks in order, each with its actions)."""
    body: list[dict[str, Any]] = []
    for block in message.blocks:
        if block.text:
            body.append(text_block(escape(block.text) if block.plain
                                   else markdown(block.text)))
        if block.actions:
            body.append({"type": "ActionSet",
                         "actions": [action_of(action) for action in block.actions]})
    if not body:
        body.append(text_block(escape(message.text) if message.plain
                               else markdown(message.text)))
    return card(body, refresh=refresh)


def refresh_block(value: str, user_ids: Sequence[str]) -> dict[str, Any]:
    """Refresh for these Teams users (a request card's approver), naming the request."""
    return {"action": {"type": "Action.Execute", "verb": REFRESH, "data": {"value": value}},
            "userIds": list(dict.fromkeys(user_ids))[:MAX_REFRESH_USERS]}


def value_of(data: Any) -> str:
    """The value an action's data carries back, or BadCard."""
    value = data.get("value") if isinstance(data, dict) else None
    if not isinstance(value, str) or not value or len(value) > MAX_VALUE:
        raise BadCard("no value")
    return value


def preview(message: Message) -> str:
    """The notification's one line, as typed (no Markdown)."""
    return message.text.replace("\\", "").replace("*", "")
