"""The timesheet's Journal seen from a chat, whatever the platform: a reply to a review
message becomes a Journal message on that submission (addMessage, as the person who wrote it,
with their own key), and the service's `journalMessage` event is shown where the review
messages of that submission went. Each adapter remembers the messages that came from it, so
they are not echoed back (bot.slack.threads, bot.teams.journal)."""

from __future__ import annotations

from timebot.client import operation
from timebot.process.runtime import Runtime

JOURNAL_MESSAGE = "journalMessage"
MAX_CONTENT = 10_000
ADD_MESSAGE = operation("""
mutation Add($content: SvcMessageContent!, $ref: SvcReferenceInput!) {
  addMessage(content: $content, reference: $ref) { id }
}""")


async def add_to_journal(runtime: Runtime, apikey: str, submit_id: str, text: str) -> str:
    """The new Journal message's id; raises the client's PermissionRefused or
    ServiceRequestError when the service refuses it."""
    data = await runtime.client.execute(
        ADD_MESSAGE, {"content": text[:MAX_CONTENT],
                      "ref": {"id": submit_id, "type": "approvalEvent"}}, apikey=apikey)
    return str(data["addMessage"]["id"])
