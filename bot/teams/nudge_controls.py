"""The controls under an approver's nudge and digest cards in Teams — Snooze 1 hour, Until
tomorrow, Turn nudges off (bot.chat.nudges' `nudge_controls`, each value naming the card's
outbox key) — and their Action.Execute invoke.

A click changes the nudges of the user the verified activity names, never anyone the card's
data names: a card sent to someone else (its row's approver or conversation not the
clicker's) changes nothing and says so. The answer replaces the clicked card with the same
card (as it is now: a nudge settled meanwhile shows its outcome) and a line saying what was
chosen, in the clicker's language; a card timebot no longer knows is answered with that line
and the controls. The same invoke again (Teams' retry: its activity id) stores nothing more
and answers the same; a stale card's click only sets the clicker's own nudges."""

from __future__ import annotations

from typing import Any

import structlog

from bot.chat.markup import Markup
from bot.chat.message import Block, Message
from bot.chat.nudges import control_change, control_text, control_value, nudge_controls
from bot.chat.person import ChatPerson
from bot.teams import cards, render
from bot.teams.endpoint import InvokeAnswer
from bot.teams.nudge_settings import TeamsNudgeSettings
from bot.teams.outgoing import TeamsOutbox
from bot.teams.reviews import card_of
from timebot.l10n import _
from timebot.process.runtime import Runtime

log = structlog.get_logger("timebot.teams.nudge_controls")

CHOSEN = "nudgeChoice"  # the id of the card's line saying what was chosen


def with_controls(message: Message, key: str) -> Message:
    """A nudge or digest with the controls under it, naming the card's outbox key."""
    return Message(message.text, (*message.blocks, nudge_controls(key)), message.facts,
                   message.plain)


def with_chosen(card: dict[str, Any], said: str) -> dict[str, Any]:
    """The card with its line saying what was chosen (in place of an earlier one)."""
    body = [node for node in card.get("body") or [] if node.get("id") != CHOSEN]
    return {**card, "body": [*body, cards.text_block(render.markdown(said), id=CHOSEN,
                                                     weight="Bolder")]}


class NudgeControls:
    def __init__(self, runtime: Runtime, outbox: TeamsOutbox, markup: Markup) -> None:
        self.runtime, self.outbox, self.markup = runtime, outbox, markup
        self.settings = TeamsNudgeSettings(runtime)

    async def answer(self, person: ChatPerson, verb: str, data: Any, conversation: str,
                     activity_id: str | None) -> InvokeAnswer:
        """The click of a control (in the person's language: the caller's `l10n.using`);
        BadValue / cards.BadCard for data timebot did not write."""
        choice, key = control_value(render.value_of(data), verb)
        row = await self.outbox.queued_with_key(key) if key else None
        if row is not None and (row.organisation_id != person.organisation_id
                                or str(row.context.get("approverId")) != person.person_id
                                or row.conversation_id != conversation):
            log.warning("teams_nudge_control_refused", reason="another person's card")
            return InvokeAnswer(200, cards.text_response(_(
                "This card was sent to someone else: nothing changed.")))
        stored, changed = await self.settings.change(
            person.organisation_id, person.person_id,
            control_change(choice, self.runtime.clock.now_ms(), person.tz), by=activity_id)
        said = control_text(choice, stored.snoozed_until_ms, self.markup)
        shown = card_of(row) if row is not None else None
        if shown is None:
            card = render.card_of(Message(said, (Block(said), nudge_controls(key))))
        else:
            card = with_chosen(shown, said)
            if changed and row is not None:
                await self.outbox.record_shown(row.id, cards.message(card), {CHOSEN: choice})
        log.info("teams_nudge_control", choice=choice, changed=changed, card=row is not None)
        return InvokeAnswer(200, cards.card_response(card))
