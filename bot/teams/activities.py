"""What becomes of a verified activity after its ack: a message in a personal chat is answered
(quick entry, bot.teams.chat; a reply to a review card goes to its Journal,
bot.teams.journal) through the connector; the bot removed from a chat or the app
uninstalled marks the user removed (nothing is sent to them any more).

Teams retries an activity whose ack was slow: the first copy of an activity id claims it
(teams_claims), any other changes nothing. A tenant no organisation connected gets a polite
answer and nothing else. The work runs in a few slots shared by every tenant."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from microsoft_agents.activity import Activity

from bot.chat.person import ChatPerson
from bot.teams.chat import QuickChat
from bot.teams.connector import Connector, ConnectorError
from bot.teams.endpoints import TeamsEndpoints, UntrustedUrl
from bot.teams.identity import NotIdentified, Sender, TeamsIdentity
from bot.teams.tenants import TeamsTenants

log = structlog.get_logger("timebot.teams")

WORK_SLOTS = 8
REPLY_ATTEMPTS = 3  # a reply the connector throttled (429) is tried again after Retry-After
MAX_RETRY_AFTER = 5.0

NOT_CONNECTED = ("Hello! Your organisation has not connected its Microsoft 365 tenant to the "
                 "time tracking service yet: an administrator connects it from their account "
                 "page (\"Connect Microsoft Teams\"). Until then I cannot do anything here.")
PERSONAL_ONLY = "Write to me in a personal chat: I answer there only."

# A message replying to an activity of the bot's (person, conversation, replyToId, text): its
# answer, or None when it is no reply to anything of ours (bot.teams.journal's, once installed)
Replies = Callable[[ChatPerson, str, str, str], Awaitable[str | None]]


def tenant_of(activity: Activity) -> str:
    conversation = activity.conversation
    if conversation is not None and conversation.tenant_id:
        return str(conversation.tenant_id)
    data = activity.channel_data
    tenant = data.get("tenant") if isinstance(data, dict) else getattr(data, "tenant", None)
    if isinstance(tenant, dict):
        return str(tenant.get("id") or "")
    return str(getattr(tenant, "id", "") or "")


class ActivityWork:
    def __init__(self, tenants: TeamsTenants, identity: TeamsIdentity, connector: Connector,
                 endpoints: TeamsEndpoints, chat: QuickChat) -> None:
        self.tenants, self.identity, self.connector = tenants, identity, connector
        self.endpoints, self.chat = endpoints, chat
        self.replies: Replies | None = None
        self.slots = asyncio.Semaphore(WORK_SLOTS)
        self.tasks: set[asyncio.Task[None]] = set()
        # One conversation's activities are handled in the order they came (its answers too).
        self.lanes: dict[str, tuple[asyncio.Lock, int]] = {}

    def later(self, activity: Activity, _claims: dict[str, Any]) -> None:
        task = asyncio.create_task(self._run(activity), name="teams-activity")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def stop(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _run(self, activity: Activity) -> None:
        lane = activity.conversation.id if activity.conversation is not None else ""
        lock, users = self.lanes.get(lane) or (asyncio.Lock(), 0)
        self.lanes[lane] = (lock, users + 1)
        try:
            async with lock, self.slots:
                await self.handle(activity)
        except Exception:  # one activity's failure is logged, never the process's
            log.exception("teams_activity_failed", type=activity.type)
        finally:
            lock, users = self.lanes[lane]
            if users <= 1:
                del self.lanes[lane]
            else:
                self.lanes[lane] = (lock, users - 1)

    async def handle(self, activity: Activity) -> None:
        tenant_id = tenant_of(activity)
        if not tenant_id:
            log.info("teams_activity_ignored", reason="no tenant")
            return
        if activity.id and not await self.tenants.claim(f"activity:{tenant_id}:{activity.id}"):
            log.info("teams_activity_retried", activity_id=activity.id[:100])
            return
        if activity.type in ("conversationUpdate", "installationUpdate"):
            await self._membership(activity, tenant_id)
        elif activity.type == "message":
            await self._message(activity, tenant_id)

    async def _membership(self, activity: Activity, tenant_id: str) -> None:
        aad = activity.from_property.aad_object_id if activity.from_property else None
        bot_id = activity.recipient.id if activity.recipient else None
        removed = (activity.type == "installationUpdate"
                   and (activity.action or "").startswith("remove")) or any(
            member.id == bot_id for member in activity.members_removed or [])
        if removed and aad:
            await self.tenants.remove_user(tenant_id, aad)
            self.identity.forget(tenant_id, aad)
            log.info("teams_user_removed", tenant=tenant_id)

    async def _message(self, activity: Activity, tenant_id: str) -> None:
        try:
            service_url = self.endpoints.check_service_url(activity.service_url or "")
        except UntrustedUrl as refusal:
            log.warning("teams_service_url_refused", reason=str(refusal))
            return
        tenant = await self.tenants.tenant(tenant_id)
        if tenant is None or not tenant.active:
            await self._reply(activity, service_url, NOT_CONNECTED)
            return
        if tenant.service_url != service_url:
            await self.tenants.note_service_url(tenant_id, service_url)
        if (activity.conversation is None
                or (activity.conversation.conversation_type or "personal") != "personal"):
            await self._reply(activity, service_url, PERSONAL_ONLY)
            return
        sender = Sender(tenant_id, str(activity.from_property.aad_object_id or ""),
                        str(activity.from_property.id), str(activity.conversation.id),
                        service_url, activity.local_timezone)
        try:
            person = await self.identity.resolve(tenant, sender)
        except NotIdentified as refusal:
            await self._reply(activity, service_url, refusal.message)
            return
        text = None
        if activity.reply_to_id and self.replies is not None:
            text = await self.replies(person, sender.conversation_id, activity.reply_to_id,
                                      activity.text or "")
        if text is None:
            text = await self.chat.answer(person, activity.text or "")
        try:
            await self._reply(activity, service_url, text)
        except ConnectorError as error:
            if not error.gone:
                raise
            await self.tenants.remove_user(tenant_id, sender.aad_object_id)
            self.identity.forget(tenant_id, sender.aad_object_id)
            log.info("teams_user_removed", tenant=tenant_id, reason=f"connector {error.status}")

    async def _reply(self, activity: Activity, service_url: str, text: str) -> None:
        conversation = activity.conversation
        assert conversation is not None
        reply: dict[str, Any] = {
            "type": "message", "text": text[:28000], "textFormat": "markdown",
            "conversation": {"id": conversation.id},
        }
        if activity.id:
            reply["replyToId"] = activity.id
        if activity.recipient is not None:
            reply["from"] = {"id": activity.recipient.id}
        if activity.from_property is not None:
            reply["recipient"] = {"id": activity.from_property.id}
        for attempt in range(REPLY_ATTEMPTS):
            try:
                await self.connector.send(service_url, conversation.id, reply)
                return
            except ConnectorError as error:
                if error.status != 429 or attempt == REPLY_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(min(error.retry_after or 1.0, MAX_RETRY_AFTER))

