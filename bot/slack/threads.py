"""Threads of approval messages ⇄ the timesheet's Journal.

A reply in the thread of an approval message (DM) becomes a Journal message on that
timesheet (addMessage, as the person who wrote it, with their own key). A Journal message
written elsewhere (an e-mail reply, the web) arrives as the service's `journalMessage` event
and is posted into the thread of every approval message of that submission. Messages that
came from Slack are remembered so they are not echoed back.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from sqlalchemy.exc import IntegrityError

from bot.chat.journal import JOURNAL_MESSAGE, add_to_journal
from bot.slack.deps import SlackDeps
from bot.slack.mrkdwn import escape
from bot.slack.replies import ephemeral, person_or_prompt
from timebot.errors import PermissionRefused, ServiceRequestError
from timebot.events.bus import ServiceEvent
from timebot.state.db import unit_of_work
from timebot.state.models import SlackClaim

log = structlog.get_logger("timebot.slack.threads")

JOURNAL_EDITED = "journalMessageEdited"
JOURNAL_DELETED = "journalMessageDeleted"
LOOKUP_RETRIES = 4


def journal_text(author: str | None, content: str) -> str:
    return f"*{escape(author or 'Someone')}* wrote in the Journal:\n{escape(content)}"


class ThreadsPart:
    handles = (JOURNAL_MESSAGE, JOURNAL_EDITED, JOURNAL_DELETED)  # the events on_event reads

    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def _remember(self, message_id: str, user: str) -> None:
        try:
            async with unit_of_work(self.deps.runtime.state_sessions) as session:
                session.add(SlackClaim(key=f"journal-from-slack:{message_id}",
                                       slack_user_id=user,
                                       created_ms=self.deps.runtime.clock.now_ms()))
        except IntegrityError:
            pass

    async def _from_slack(self, message_id: str) -> bool:
        async with self.deps.runtime.read_sessions() as session:
            return await session.get(SlackClaim, f"journal-from-slack:{message_id}") is not None

    async def on_message(self, event: dict[str, Any]) -> None:
        thread_ts = event.get("thread_ts")
        if not thread_ts or event.get("subtype") or event.get("bot_id"):
            return
        if thread_ts == event.get("ts"):
            return
        channel = str(event.get("channel", ""))
        user = str(event.get("user", ""))
        text = str(event.get("text") or "").strip()
        row = await self.deps.sender.posted(channel, str(thread_ts))
        retries = LOOKUP_RETRIES if event.get("channel_type") == "im" else 0
        for _ in range(retries):  # a reply racing the recording of our message
            if row is not None:
                break
            await asyncio.sleep(0.5)
            row = await self.deps.sender.posted(channel, str(thread_ts))
        if row is None or not (row.ref or "").startswith("approval:") or not text:
            return
        person = await person_or_prompt(self.deps, user, channel)
        if person is None:
            return
        submit_id = str(row.context.get("submitId"))
        try:
            message_id = await add_to_journal(self.deps.runtime, person.apikey, submit_id, text)
        except (PermissionRefused, ServiceRequestError) as error:
            await ephemeral(self.deps.web, channel, user,
                            f"Not added to the timesheet's Journal: {escape(error)}")
            return
        await self._remember(message_id, user)

    async def on_event(self, event: ServiceEvent) -> None:
        if event.event in (JOURNAL_EDITED, JOURNAL_DELETED):
            await self.follow(event)
            return
        if event.event != JOURNAL_MESSAGE or not await self.deps.workspace.serves(
                event.organisation_id):
            return
        data = event.data
        message_id = str(data.get("messageId", ""))
        submit_id = data.get("submitId")
        if not submit_id or await self._from_slack(message_id):
            return
        text = journal_text((data.get("author") or {}).get("name"), str(data.get("content")))
        threads: dict[str, str] = {}
        for row in await self.deps.sender.sent_with_ref(f"approval:{submit_id}:"):
            if row.channel_id and row.ts and not row.context.get("nudge"):
                threads.setdefault(row.channel_id, row.ts)
        for channel, ts in threads.items():
            await self.deps.sender.post(
                channel, text, None, key=f"journal:{message_id}:{channel}", thread_ts=ts,
                bulk=True)

    async def follow(self, event: ServiceEvent) -> None:
        """A Journal message timebot posted into threads was edited or deleted: each of
        its posts is updated in place (chat.update) or removed (chat.delete), through the
        sender (paced, durable, in order after the post)."""
        if not await self.deps.workspace.serves(event.organisation_id):
            return
        data = event.data
        message_id = str(data.get("messageId") or "")
        if not message_id:
            return
        text = journal_text((data.get("author") or {}).get("name"),
                            str(data.get("content"))) + "\n_(edited)_"
        for row in await self.deps.sender.with_key_prefix(f"journal:{message_id}:"):
            if event.event == JOURNAL_EDITED:
                await self.deps.sender.update_row(row.id, text, None, bulk=True)
            else:
                await self.deps.sender.delete_row(row.id, bulk=True)


def register(app: AsyncApp, deps: SlackDeps) -> ThreadsPart:
    part = ThreadsPart(deps)
    app.event("message")(part.on_message)
    deps.hub.subscribe("slack-threads", part.on_event, part.handles)
    return part
