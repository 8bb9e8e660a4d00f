"""What Teams shows: the Adaptive Cards of a review request, its outcome, the daily digest
("Approve all (N)" behind a confirmation) and the nudges, and the envelopes that carry a card
(a message activity, an invoke response).

Pure functions, in the language and formats in force (`l10n.using` around the call). The
buttons are Universal Actions (`Action.Execute`, card version 1.4): a click reaches the bot
as an `adaptiveCard/action` invoke naming a verb and the data written here, and is answered
with the card that replaces the clicked one. A request card carries a `refresh` naming the
Teams users who may see it change (its approvers): Teams asks the bot for the current card
when one of them opens the chat, so a stale card shows its outcome before it is clicked.

Data written into a card comes back from outside (any signed invoke can carry any data): it is
read back with `request_of` / `approve_all_of`, which raise `BadCard` for anything that is not
what timebot wrote."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from timebot import l10n
from timebot.l10n import _, ngettext
from timebot.summary import TimesheetSummary

CARD_TYPE = "application/vnd.microsoft.card.adaptive"
SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
VERSION = "1.4"  # the first with Action.Execute (Universal Actions)

APPROVE = "approve"
REJECT = "reject"
REFRESH = "refresh"
APPROVE_ALL = "approveAll"
SUBMIT_NOW = "submitNow"
REASON_INPUT = "reason"
MAX_ITEMS = 40  # requests one digest lists and "Approve all" names
MAX_REFRESH_USERS = 60  # Teams refreshes a card automatically for at most 60 users
MAX_ID = 64
_MARKDOWN = set("\\*_[]()~`#>+-!<|")


class BadCard(ValueError):
    """Card data that is not what timebot wrote."""


@dataclass(frozen=True)
class CardRequest:
    """What a request card's actions name: the submission, its stage, the timesheet and its
    period (the same facts as the Slack buttons')."""

    submit_id: str
    stage: int
    timesheet_id: str
    person_id: str
    start_ms: int
    end_ms: int

    def data(self) -> dict[str, Any]:
        """The `data` of an Action.Execute (the verb travels beside it)."""
        return {"submitId": self.submit_id, "stage": self.stage,
                "timesheetId": self.timesheet_id, "personId": self.person_id,
                "startTime": self.start_ms, "endTime": self.end_ms}


def _ident(value: Any, *, empty: bool = False) -> str:
    if not isinstance(value, str) or len(value) > MAX_ID or (not value and not empty):
        raise BadCard("not an id")
    return value


def _whole(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise BadCard("not a whole number")
    return value


def request_of(data: Any) -> CardRequest:
    """The request an action's data names, or BadCard."""
    if not isinstance(data, dict):
        raise BadCard("not an object")
    start, end = _whole(data.get("startTime")), _whole(data.get("endTime"))
    if end <= start:
        raise BadCard("the period ends before it starts")
    return CardRequest(_ident(data.get("submitId")), _whole(data.get("stage")),
                       _ident(data.get("timesheetId"), empty=True),
                       _ident(data.get("personId")), start, end)


def reason_of(data: Any) -> str:
    """The reject reason typed into the card (its input travels in the data), stripped."""
    value = data.get(REASON_INPUT) if isinstance(data, dict) else None
    return value.strip()[:2000] if isinstance(value, str) else ""


def approve_all_of(data: Any) -> list[tuple[str, int]]:
    """The (submit id, stage) pairs an "Approve all" names, or BadCard."""
    pairs = data.get("requests") if isinstance(data, dict) else None
    if not isinstance(pairs, list) or not 1 <= len(pairs) <= MAX_ITEMS:
        raise BadCard("not a list of requests")
    found: list[tuple[str, int]] = []
    for pair in pairs:
        if not isinstance(pair, list) or len(pair) != 2:
            raise BadCard("not a pair")
        found.append((_ident(pair[0]), _whole(pair[1])))
    if len(set(found)) != len(found):
        raise BadCard("a request named twice")
    return found


def escape(text: str) -> str:
    """Text shown as itself in a TextBlock (Teams reads TextBlocks as Markdown)."""
    return "".join(f"\\{char}" if char in _MARKDOWN else char for char in text)


def when(ms: int) -> str:
    """An instant in the reader's time zone, date format and clock."""
    return l10n.format_datetime(ms, l10n.current())


def period_text(start_ms: int, end_ms: int, time_zone: str = "UTC") -> str:
    """The period's days in `time_zone` (the period's own), in the reader's formats."""
    return l10n.format_period(start_ms, end_ms, replace(l10n.current(), time_zone=time_zone))


def hours(ms: int) -> str:
    return l10n.format_duration(ms, l10n.current())


def text_block(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def summary_facts(summary: TimesheetSummary) -> dict[str, Any]:
    """The timesheet's total, days, projects and absences as a FactSet."""
    local = l10n.current()
    facts = [{"title": _("Total:"), "value": hours(summary.total_ms)}]
    if summary.by_day:
        facts.append({"title": _("By day:"), "value": ", ".join(
            f"{l10n.format_day(day, local)} {hours(ms)}" for day, ms in summary.by_day)})
    if summary.by_project:
        facts.append({"title": _("By project:"), "value": ", ".join(
            f"{escape(name)} {hours(ms)}" for name, ms in summary.by_project)})
    if summary.absences:
        facts.append({"title": _("Absences:"), "value": ", ".join(
            f"{escape(name)} {hours(ms)}" for name, ms in summary.absences)})
    return {"type": "FactSet", "facts": facts}


def decision_actions(request: CardRequest) -> list[dict[str, Any]]:
    """Approve, and Reject behind a card that asks the reason (required: Teams does not send
    the action without it, and the bot refuses a reject without one anyway)."""
    return [
        {"type": "Action.Execute", "title": _("Approve"), "verb": APPROVE, "style": "positive",
         "data": request.data(), "associatedInputs": "none"},
        {"type": "Action.ShowCard", "title": _("Reject"), "card": {
            "type": "AdaptiveCard", "version": VERSION,
            "body": [{"type": "Input.Text", "id": REASON_INPUT, "isMultiline": True,
                      "isRequired": True, "label": _("Reason (the person sees it)"),
                      "errorMessage": _("Reason (the person sees it)"), "maxLength": 2000}],
            "actions": [{"type": "Action.Execute", "title": _("Reject timesheet"),
                         "verb": REJECT, "style": "destructive", "data": request.data(),
                         "associatedInputs": "auto"}],
        }},
    ]


def refresh_block(request: CardRequest, user_ids: Sequence[str]) -> dict[str, Any]:
    """Universal Actions' refresh: these Teams users get the current card when they see it."""
    return {"action": {"type": "Action.Execute", "verb": REFRESH,
                       "data": request.data()},
            "userIds": list(dict.fromkeys(user_ids))[:MAX_REFRESH_USERS]}


def card(body: list[dict[str, Any]], actions: list[dict[str, Any]] | None = None,
         refresh: dict[str, Any] | None = None) -> dict[str, Any]:
    shown: dict[str, Any] = {"type": "AdaptiveCard", "$schema": SCHEMA, "version": VERSION,
                             "body": body}
    if actions:
        shown["actions"] = actions
    if refresh is not None:
        shown["refresh"] = refresh
    return shown


def review_card(request: CardRequest, person_name: str, stage_text: str,
                summary: TimesheetSummary, approver_user_ids: Sequence[str],
                reason: str | None = None) -> dict[str, Any]:
    """The request to approve: who submitted which period at which stage, the summary, and
    Approve / Reject; `reason` says why this approver is asked too (another is away)."""
    period = period_text(request.start_ms, request.end_ms, summary.time_zone)
    body: list[dict[str, Any]] = []
    if reason is not None:
        body.append(text_block(_("{reason}: you are asked too.").format(
            reason=escape(reason)), isSubtle=True))
    body.append(text_block(_("{person} submitted the timesheet for {period}: waiting for "
                             "your approval").format(person=escape(person_name),
                                                     period=period), weight="Bolder"))
    body.append(text_block(stage_text, isSubtle=True, spacing="None"))
    body.append(summary_facts(summary))
    if summary.changed_since_rejection:
        body.append(text_block(_(
            "*Changed since the rejection:* {added} added, {modified} modified, {deleted} "
            "deleted").format(added=summary.added, modified=summary.modified,
                              deleted=summary.deleted)))
    return card(body, decision_actions(request), refresh_block(request, approver_user_ids))


def outcome_card(person_name: str, start_ms: int, end_ms: int, outcome: str,
                 time_zone: str = "UTC") -> dict[str, Any]:
    """What a request card becomes once decided: no buttons, no refresh (`outcome` is
    Markdown already, its names escaped)."""
    period = period_text(start_ms, end_ms, time_zone)
    return card([text_block(_("Timesheet of {person} for {period}: {outcome}").format(
        person=escape(person_name), period=period, outcome=outcome))])


def outcome_text(data: dict[str, Any], ref_stage: int, approver_id: str,
                 now_ms: int) -> str | None:
    """What a request card (of `ref_stage`, shown to `approver_id`) says after the service's
    approval event `data`, or None while it still waits for that approver."""
    status = {"d": "draft", "s": "submitted", "a": "approved", "r": "rejected"}.get(
        str(data.get("status")), data.get("status"))
    by = escape((data.get("by") or {}).get("name") or _("someone"))
    at = when(now_ms)
    action = data.get("action")
    approved_by = _("Approved by {by} at {at}").format(by=by, at=at)
    if status == "approved":
        if action == "autoApproved":
            return _("Approved automatically at {at}").format(at=at)
        return approved_by
    if status == "rejected":
        reason = escape((data.get("comment") or "").strip())
        return _("Rejected by {by} at {at}").format(by=by, at=at) + (
            f": {reason}" if reason else "")
    if status in ("draft", "open", None) or action in ("withdrawn", "reopened"):
        return _("No longer waiting for approval ({why}) since {at}").format(
            why=action or status, at=at)
    if action == "restarted":
        return _("Changed by {by} at {at}: the approval starts again").format(by=by, at=at)
    stage = int(data.get("stage") or 0)
    pending = {p.get("id") for p in data.get("pendingApprovers") or []}
    if ref_stage < stage:
        return approved_by if action == "approved" else _("Stage done at {at}").format(at=at)
    if ref_stage == stage and approver_id not in pending and action == "approved":
        return approved_by
    return None


@dataclass(frozen=True)
class DigestItem:
    """A request waiting for the digest's reader, since when."""

    request: CardRequest
    person_name: str
    since_ms: int
    time_zone: str = "UTC"


def approve_all_actions(requests: Sequence[CardRequest]) -> list[dict[str, Any]]:
    """"Approve all (N)": a confirmation that names N, then the action naming exactly the N
    requests shown (their submit ids and stages)."""
    named = list(requests)[:MAX_ITEMS]
    count = len(named)
    return [{"type": "Action.ShowCard", "title": _("Approve all ({n})").format(n=count),
             "card": {"type": "AdaptiveCard", "version": VERSION, "body": [text_block(
                 ngettext("Approve the {n} timesheet listed here?",
                          "Approve the {n} timesheets listed here?", count).format(n=count),
                 weight="Bolder")],
                 "actions": [{"type": "Action.Execute", "verb": APPROVE_ALL,
                              "title": _("Approve {n}").format(n=count), "style": "positive",
                              "associatedInputs": "none",
                              "data": {"requests": [[r.submit_id, r.stage] for r in named]}}]}}]


def digest_card(items: Sequence[DigestItem]) -> dict[str, Any]:
    """The daily digest: each waiting request with its own Approve / Reject, then "Approve all
    (N)" naming the N shown when more than one is."""
    shown = list(items)[:MAX_ITEMS]
    waiting = _("{n} timesheet(s) wait for your approval").format(n=len(items))
    if len(items) > len(shown):
        waiting += " " + _("(the first {n} here)").format(n=len(shown))
    body: list[dict[str, Any]] = [text_block(waiting, weight="Bolder", size="Medium")]
    for item in shown:
        body.append({"type": "Container", "separator": True, "items": [
            text_block(f"**{escape(item.person_name)}** - "
                       f"{period_text(item.request.start_ms, item.request.end_ms, item.time_zone)}"
                       " - " + _("since {since}").format(since=when(item.since_ms))),
            {"type": "ActionSet", "actions": decision_actions(item.request)},
        ]})
    return card(body, approve_all_actions([i.request for i in shown]) if len(shown) > 1
                else None)


def approver_nudge_card(item: DigestItem, approver_user_ids: Sequence[str]) -> dict[str, Any]:
    """A reminder of one request still waiting, with its buttons (and refresh)."""
    text = _("Reminder: the timesheet of {person} for {period} has waited for your approval "
             "since {since}.").format(
        person=escape(item.person_name),
        period=period_text(item.request.start_ms, item.request.end_ms, item.time_zone),
        since=when(item.since_ms))
    return card([text_block(text)], decision_actions(item.request),
                refresh_block(item.request, approver_user_ids))


def staff_nudge_card(text: str, start_ms: int, end_ms: int, key: str) -> dict[str, Any]:
    """A staff reminder (`text`, Markdown already) with "Submit now" for the period; the
    action carries the key the reminder was queued with."""
    return card([text_block(text)], [{
        "type": "Action.Execute", "verb": SUBMIT_NOW, "title": _("Submit now"),
        "style": "positive", "associatedInputs": "none",
        "data": {"startTime": start_ms, "endTime": end_ms, "key": key}}])


def notice_card(paragraphs: Sequence[str],
                decide: dict[str, Any] | None = None) -> dict[str, Any]:
    """A notice in paragraphs (a climbing reminder, an away notice), each escaped; `decide`
    is a request card whose body and buttons follow (a climb to an administrator)."""
    body = [text_block(escape(p)) for p in paragraphs]
    if decide is None:
        return card(body)
    return card([*body, *decide["body"]], decide.get("actions"), decide.get("refresh"))


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
