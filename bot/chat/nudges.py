"""What nudges say, platform-neutral: the approver's reminder of one request, the approver's
daily digest (with "Approve all (N)"), the staff nudge to submit (with "Submit now"), the
climbing reminder to the approver's manager or an administrator.

When each is due is bot.chat.nudge_schedule (pure); who is told what is timebot.notify; an
adapter's loop applies the schedules, renders these messages and sends them (Slack: DMs through
its sender; Teams: proactive messages), with its own snooze / off controls added below. Texts
are in the language in force (`l10n.using` the reader's localisation) and in the chat markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, tzinfo
from typing import Any

from bot.chat.approvals import (
    DECISION,
    Request,
    decision_actions,
    period_text,
    request_message,
    summary_text,
)
from bot.chat.approve_all import MAX_ITEMS, approve_all_block
from bot.chat.markup import Markup
from bot.chat.message import Action, Block, Fact, Message
from bot.chat.nudge_schedule import snooze_until
from bot.chat.values import BadValue, ident, json_list, whole
from timebot import l10n
from timebot.l10n import _
from timebot.notify.approvals import period_label
from timebot.notify.escalations import ClimbRequest, climb_paragraphs
from timebot.stages import stage_label

SUBMIT_NOW = "timebot_submit_now"
SUBMIT_GROUP = "submit"
SNOOZE = "timebot_nudge_snooze"  # value "1h"; SNOOZE_tomorrow: value "tomorrow"
NUDGES_OFF = "timebot_nudge_off"
CONTROLS_GROUP = "nudge"
CONTROLS = {SNOOZE: "1h", f"{SNOOZE}_tomorrow": "tomorrow", NUDGES_OFF: "off"}
# `/timesheet nudges on|off` (typed in Teams as `timesheet nudges on`): what each stores
COMMAND_CHANGES: dict[str, dict[str, Any]] = {
    "on": {"off": False, "snoozed_until_ms": None}, "off": {"off": True}}
COMMAND_ANSWERS = {"on": l10n.N_("Approval nudges are on."),
                   "off": l10n.N_("Approval nudges are off.")}

# The staff nudge per periodicity (whole sentences: a noun's gender differs between languages).
ENDING = {
    "daily": l10n.N_("The day is ending: your timesheet for {period} is not submitted yet."),
    "weekly": l10n.N_("The week is ending: your timesheet for {period} is not submitted yet."),
    "biWeekly": l10n.N_(
        "The fortnight is ending: your timesheet for {period} is not submitted yet."),
    "semiMonthly": l10n.N_(
        "The half-month is ending: your timesheet for {period} is not submitted yet."),
    "monthly": l10n.N_(
        "The month is ending: your timesheet for {period} is not submitted yet."),
}


def approver_nudge(request: Request, person_name: str, since_ms: int, markup: Markup
                   ) -> Message:
    """The reminder of one request still waiting for the approver, with Approve / Reject."""
    period = period_text(request.start_ms, request.end_ms)
    text = _("Reminder: the timesheet of {person} for {period} has waited for your "
             "approval since {since}.").format(person=markup.escape(person_name),
                                               period=period, since=markup.time(since_ms))
    return Message(text, (Block(text), Block(actions=decision_actions(request), group=DECISION)),
                   facts=(Fact("person", person_name), Fact("period", period)))


def digest(items: Sequence[tuple[Request, str, int]], markup: Markup,
           limit: int = MAX_ITEMS) -> Message:
    """One message listing what waits for the approver (request, its person's name, since
    when), oldest first, the first `limit` shown (the platform's room), each with Approve /
    Reject, and "Approve all (N)" naming exactly those shown when more than one."""
    ordered = sorted(items, key=lambda item: (item[2], item[1].casefold(), item[0].start_ms,
                                              item[0].submit_id))  # oldest first, then by name
    shown = ordered[:min(limit, MAX_ITEMS)]
    waiting = _("{n} timesheet(s) wait for your approval").format(n=len(items))
    if len(shown) != len(items):
        waiting += " " + _("(the first {n} here)").format(n=len(shown))
    blocks = [Block(f"*{waiting}:*")]
    for request, name, since_ms in shown:
        blocks.append(Block(
            f"{markup.escape(name)} - {period_text(request.start_ms, request.end_ms)} - "
            + _("since {since}").format(since=markup.time(since_ms)),
            decision_actions(request)))
    if len(shown) > 1:
        blocks.append(approve_all_block([request for request, _name, _since in shown]))
    return Message(f"{waiting}:", tuple(blocks))


def staff_nudge_text(status: str, start_ms: int, end_ms: int, now_ms: int,
                     periodicity: str | None = None, zone: tzinfo = UTC) -> str:
    """What the staff nudge says: rejected, past its period, or its period ending (`status`
    draft or rejected; `periodicity` the person's, None: UTC weeks)."""
    period = period_text(start_ms, end_ms, zone)
    if status == "rejected":
        sentence = _("Your timesheet for {period} was rejected: correct it and submit again.")
    elif end_ms <= now_ms:  # a reminder after the period (timesheetReminder)
        sentence = _("Your timesheet for {period} is not submitted yet.")
    else:
        sentence = _(ENDING.get(periodicity or "weekly", ENDING["weekly"]))
    return sentence.format(period=period)


def submit_now_message(text: str, start_ms: int, end_ms: int, key: str) -> Message:
    """A nudge with "Submit now"; the action carries the period and the key the message was
    sent with, so a click finds its message whether or not the platform's answer is
    recorded yet."""
    return Message(text, (Block(text), Block(actions=(Action(
        SUBMIT_NOW, _("Submit now"), json.dumps([start_ms, end_ms, key]), "primary"),),
        group=SUBMIT_GROUP)))


def submit_value(value: str) -> tuple[int, int, str | None]:
    """The period and the message's key a "Submit now" action carries, or BadValue."""
    items = json_list(value, (2, 3))
    start, end = whole(items[0]), whole(items[1])
    if end <= start:
        raise BadValue("the period ends before it starts")
    return start, end, ident(items[2], limit=300) if len(items) > 2 else None


def climb_message(request: ClimbRequest, markup: Markup) -> Message:
    """The climbing reminder (issue 28), told to the approver's people manager or an
    administrator when a stage waited twice the reminder interval: who has not decided whose
    timesheet since when (and why, when away) and what the reader can do; an administrator,
    who may decide, gets the review request's Approve / Reject under it."""
    summary = request.summary
    period = period_label(summary.start_ms, summary.end_ms, summary.time_zone)
    said = [markup.escape(p) for p in climb_paragraphs(request, period)]
    blocks = [Block("\n".join(said))]
    if request.may_decide:
        shown = Request(request.submit_id, request.stage, "", summary.person_id,
                        summary.start_ms, summary.end_ms)
        label = (stage_label(request.stage, request.stage_count)
                 if request.stage_count > 1 else _("approval"))
        blocks.extend(request_message(shown, summary.person_name, label,
                                      summary_text(summary, markup), markup).blocks)
    return Message(" ".join(said), tuple(blocks))


def nudge_controls(card: str | None = None) -> Block:
    """Under an approver's nudge or digest: Snooze 1 hour, Until tomorrow, Turn nudges off
    (their values read by `control_value`). `card`: the key of the message they are under,
    carried in each value, so a click finds its message (an adapter that needs it)."""
    def value(choice: str) -> str:
        return choice if card is None else json.dumps([choice, card])

    return Block(actions=tuple(
        Action(action_id, label, value(CONTROLS[action_id])) for action_id, label in (
            (SNOOZE, _("Snooze 1 hour")), (f"{SNOOZE}_tomorrow", _("Until tomorrow")),
            (NUDGES_OFF, _("Turn nudges off")))), group=CONTROLS_GROUP)


def control_value(value: str, action_id: str | None = None) -> tuple[str, str | None]:
    """The choice a control's value carries ("1h", "tomorrow" or "off") and the key of the
    message it was under (None: not carried), or BadValue (also when `action_id`, given,
    names another control than the value does)."""
    if value in CONTROLS.values():
        choice, card = value, None
    else:
        items = json_list(value, (2,))
        if not isinstance(items[0], str) or items[0] not in CONTROLS.values():
            raise BadValue("not a nudge control")
        choice, card = items[0], ident(items[1], limit=300)
    if action_id is not None and CONTROLS.get(action_id) != choice:
        raise BadValue("the value is another control's")
    return choice, card


def control_change(choice: str, now_ms: int, tz: str | None) -> dict[str, Any]:
    """What a control click stores: nudges off, or snoozed until (bot.chat.nudge_schedule);
    a snooze also ends an earlier "off" (nudges resume when it ends, as it says)."""
    if choice == "off":
        return {"off": True}
    return {"off": False, "snoozed_until_ms": snooze_until(choice, now_ms, tz)}


def control_text(choice: str, until_ms: int | None, markup: Markup) -> str:
    """What the approver is told they chose (and, for off, how to turn nudges back on);
    `until_ms`: the snooze's end as stored (None: nothing snoozed, nudges off)."""
    if choice == "off" or until_ms is None:
        return _("Approval nudges are off; `/timesheet nudges on` to resume.")
    return _("Nudges snoozed until {until}.").format(until=markup.time(until_ms))
