"""Review cards ⇄ the timesheet's Journal, in Teams (as bot.slack.threads does in Slack).

A message written in reply to a review card (its `replyToId` is the activity id the connector
gave the card, recorded on the card's `teams_outgoing` row) becomes a Journal message on that
submission, added as the verified person who wrote it with their own key (bot.chat.journal).
A Journal message written elsewhere (an e-mail reply, the web, Slack) arrives as the service's
`journalMessage` event and is queued through the proactive sender into each conversation where
a card of that submission went, as a reply to the card, once per event (the dedupe key is the
message id). The messages that came from Teams are claimed (teams_claims) and not echoed back.
"""

from __future__ import annotations

import structlog

from bot.chat.journal import JOURNAL_MESSAGE, add_to_journal
from bot.chat.person import ChatPerson, speaking
from bot.teams.chat import text_of
from bot.teams.outgoing import Recipient, Send, TeamsOutbox
from bot.teams.render import TEAMS
from bot.teams.tenants import TeamsTenants
from timebot import l10n
from timebot.errors import PermissionRefused, ServiceRequestError
from timebot.events.bus import ServiceEvent
from timebot.l10n import _
from timebot.process.runtime import Runtime

log = structlog.get_logger("timebot.teams.journal")


def from_teams_key(message_id: str) -> str:
    return f"journal-from-teams:{message_id}"


def journal_text(author: str | None, content: str) -> str:
    return _("**{author}** wrote in the Journal:").format(
        author=TEAMS.escape(author or _("Someone"))) + "\n\n" + TEAMS.escape(content)


class TeamsJournal:
    handles = (JOURNAL_MESSAGE,)  # the events on_event reads

    def __init__(self, runtime: Runtime, tenants: TeamsTenants, outbox: TeamsOutbox) -> None:
        self.runtime, self.tenants, self.outbox = runtime, tenants, outbox

    async def reply(self, person: ChatPerson, conversation_id: str, reply_to_id: str,
                    text: str) -> str | None:
        """The answer to a message replying to a review card of this conversation (None when
        it replies to nothing of ours: the message is quick entry)."""
        row = await self.outbox.sent_as(reply_to_id, conversation_id, "approval:")
        if row is None or row.organisation_id != person.organisation_id:
            return None
        words = text_of(text)
        with l10n.using(await speaking(self.runtime, person)):
            if not words:
                return _("Nothing to add to the timesheet's Journal.")
            try:
                message_id = await add_to_journal(self.runtime, person.apikey,
                                                  str(row.context.get("submitId")), words)
            except (PermissionRefused, ServiceRequestError) as error:
                return _("Not added to the timesheet's Journal: {error}").format(
                    error=TEAMS.escape(str(error)))
            await self.tenants.claim(from_teams_key(message_id))
            log.info("teams_journal_added")
            return _("Added to the timesheet's Journal.")

    async def on_event(self, event: ServiceEvent) -> None:
        if event.event != JOURNAL_MESSAGE:
            return
        data = event.data
        message_id, submit_id = str(data.get("messageId") or ""), data.get("submitId")
        if not message_id or not submit_id:
            return
        if await self.tenants.claimed(from_teams_key(message_id)):
            return  # written in Teams: not echoed
        text = journal_text((data.get("author") or {}).get("name"), str(data.get("content")))
        cards: dict[str, Send] = {}
        for row in await self.outbox.with_ref(f"approval:{submit_id}:"):
            if row.organisation_id != event.organisation_id or row.context.get("nudge"):
                continue  # never into another organisation's tenant
            activity = {"type": "message", "text": text[:28000], "textFormat": "markdown"}
            if row.activity_id:
                activity["replyToId"] = row.activity_id
            cards.setdefault(row.conversation_id, Send(
                Recipient(row.tenant_id, row.organisation_id, row.conversation_id,
                          row.service_url),
                activity, key=f"teams-journal:{message_id}:{row.conversation_id}"[:400]))
        await self.outbox.send_many(list(cards.values()))
