"""The pieces of Teams' Adaptive Cards and their envelopes (a message activity, an invoke
response), and a notice in paragraphs written as typed (an answer to a click). What a chat
says is bot.chat's (request, outcome, nudges, digest, climbing reminder): bot.teams.render
draws it.

Pure functions, in the language and formats in force (`l10n.using` around the call). Data a
card carries comes back from outside (any signed invoke can carry any data): `reason_of` and
bot.teams.render's `value_of` read it with guards (`BadCard`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.chat.markup import Markup
from bot.chat.message import Block, Message
from timebot import l10n

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
VERSION = "1.4"  # the first with Action.Execute (Universal Actions)

REFRESH = "refresh"
REASON_INPUT = "reason"
_MARKDOWN = set("\\*_[]()~`#>+-!<|")


class BadCard(ValueError):
    """Card data that is not what timebot wrote."""


def escape(text: str) -> str:
    """Text shown as itself in a TextBlock (Teams reads TextBlocks as Markdown)."""
    return "".join(f"\\{char}" if char in _MARKDOWN else char for char in text)


def when(ms: int) -> str:
    """An instant in the reader's time zone, date format and clock."""
    return l10n.format_datetime(ms, l10n.current())


def text_block(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def card(body: list[dict[str, Any]], actions: list[dict[str, Any]] | None = None,
         refresh: dict[str, Any] | None = None) -> dict[str, Any]:
    shown: dict[str, Any] = {"type": "AdaptiveCard", "$schema": SCHEMA, "version": VERSION,
                             "body": body}
    if actions:
        shown["actions"] = actions
    if refresh is not None:
        shown["refresh"] = refresh
    return shown


def reason_of(data: Any) -> str:
    """The reject reason typed into the card (its input travels in the data), stripped."""
    value = data.get(REASON_INPUT) if isinstance(data, dict) else None
    return value.strip()[:2000] if isinstance(value, str) else ""


def notice_message(paragraphs: Sequence[str], markup: Markup) -> Message:
    """A notice in paragraphs written as typed, each escaped."""
    return Message(" ".join(paragraphs), tuple(Block(markup.escape(p)) for p in paragraphs),
                   plain=True)


def message(card_content: dict[str, Any], summary: str = "") -> dict[str, Any]:
    """A message activity carrying the card (`summary`: the notification's preview)."""
    activity: dict[str, Any] = {"type": "message", "attachments": [
        {"contentType": CARD_TYPE, "content": card_content}]}
    if summary:
        activity["summary"] = summary
    return activity


def card_response(card_content: dict[str, Any]) -> dict[str, Any]:
    """The body of an `adaptiveCard/action` invoke response: this card replaces the clicked."""
    return {"statusCode": 200, "type": CARD_TYPE, "value": card_content}


def text_response(text: str) -> dict[str, Any]:
    """An invoke response that shows `text` to the clicking user and keeps their card."""
    return {"statusCode": 200, "type": "application/vnd.microsoft.activity.message",
            "value": text}


def error_response(status: int, text: str) -> dict[str, Any]:
    """An invoke response refusing the action (400: the card's data is not timebot's; 401:
    the user is not known)."""
    code = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden"}.get(status, "Error")
    return {"statusCode": status, "type": "application/vnd.microsoft.error",
            "value": {"code": code, "message": text}}
