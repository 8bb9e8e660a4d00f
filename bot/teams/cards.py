"""The pieces of Teams' Adaptive Cards and their envelopes (a message activity, an invoke
response), and the Teams messages the neutral core (bot.chat) does not write yet: the daily
digest with "Approve all (N)" behind a confirmation, the approver and staff nudges, a notice in
paragraphs. Each is a neutral `Message` (bot.chat.message), rendered by bot.teams.render like
every other.

Pure functions, in the language and formats in force (`l10n.using` around the call). Data a
card carries comes back from outside (any signed invoke can carry any data): `reason_of` and
`approve_all_of` read it with guards (`BadCard`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.chat.approvals import Request, decision_actions, period_text
from bot.chat.markup import Markup
from bot.chat.message import Action, Block, Confirm, Message
from bot.chat.values import BadValue, ident, json_list, whole
from timebot import l10n
from timebot.l10n import _, ngettext

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
VERSION = "1.4"  # the first with Action.Execute (Universal Actions)

REFRESH = "refresh"
APPROVE_ALL = "timebot_approve_all"
SUBMIT_NOW = "timebot_submit_now"
REASON_INPUT = "reason"
MAX_ITEMS = 40  # requests one digest lists and "Approve all" names
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


def approve_all_value(requests: Sequence[Request]) -> str:
    """What "Approve all" names: the requests' submit ids and stages, in the digest's order."""
    return json.dumps([[r.submit_id, r.stage] for r in list(requests)[:MAX_ITEMS]],
                      separators=(",", ":"))


def approve_all_of(value: str) -> list[tuple[str, int]]:
    """The (submit id, stage) pairs an "Approve all" names, or BadCard."""
    try:
        pairs = json_list(value, tuple(range(1, MAX_ITEMS + 1)))
        found = []
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2:
                raise BadValue("not a pair")
            found.append((ident(pair[0]), whole(pair[1])))
    except BadValue as error:
        raise BadCard(str(error)) from error
    if len(set(found)) != len(found):
        raise BadCard("a request named twice")
    return found


@dataclass(frozen=True)
class Waiting:
    """A request waiting for the reader, since when."""

    request: Request
    person_name: str
    since_ms: int


def approve_all_action(requests: Sequence[Request]) -> Action:
    """"Approve all (N)", asked first with a confirmation naming N."""
    count = min(len(requests), MAX_ITEMS)
    return Action(APPROVE_ALL, _("Approve all ({n})").format(n=count),
                  approve_all_value(requests), "primary", Confirm(
                      _("Approve all?"), ngettext("Approve the {n} timesheet listed here?",
                                                  "Approve the {n} timesheets listed here?",
                                                  count).format(n=count),
                      _("Approve {n}").format(n=count), _("Cancel"), "primary"))


def digest_message(items: Sequence[Waiting], markup: Markup) -> Message:
    """The daily digest: each waiting request with its own Approve / Reject, then "Approve all
    (N)" naming the N shown when more than one is."""
    shown = list(items)[:MAX_ITEMS]
    waiting = _("{n} timesheet(s) wait for your approval").format(n=len(items))
    if len(items) > len(shown):
        waiting += " " + _("(the first {n} here)").format(n=len(shown))
    blocks = [Block(f"*{waiting}*")]
    for item in shown:
        blocks.append(Block(
            f"*{markup.escape(item.person_name)}* - "
            f"{period_text(item.request.start_ms, item.request.end_ms)} - "
            + _("since {since}").format(since=markup.time(item.since_ms)),
            decision_actions(item.request)))
    if len(shown) > 1:
        blocks.append(Block(actions=(approve_all_action([i.request for i in shown]),)))
    return Message(waiting, tuple(blocks))


def approver_nudge_message(item: Waiting, markup: Markup) -> Message:
    """A reminder of one request still waiting, with its buttons."""
    text = _("Reminder: the timesheet of {person} for {period} has waited for your approval "
             "since {since}.").format(
        person=markup.escape(item.person_name),
        period=period_text(item.request.start_ms, item.request.end_ms),
        since=markup.time(item.since_ms))
    return Message(text, (Block(text, decision_actions(item.request)),))


def staff_nudge_message(text: str, start_ms: int, end_ms: int, key: str) -> Message:
    """A staff reminder (`text`, chat markup) with "Submit now" for the period; the action
    carries the key the reminder was queued with."""
    value = json.dumps([start_ms, end_ms, key])
    return Message(text, (Block(text, (Action(SUBMIT_NOW, _("Submit now"), value,
                                              "primary"),)),))


def notice_message(paragraphs: Sequence[str], markup: Markup,
                   decide: Message | None = None) -> Message:
    """A notice in paragraphs written as typed (a climbing reminder), escaped; `decide`: a
    request message whose blocks follow (a climb to an administrator)."""
    blocks = tuple(Block(markup.escape(p)) for p in paragraphs)
    return Message(" ".join(paragraphs), blocks + (decide.blocks if decide else ()),
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
