"""The owner's e-mail when their timesheet is rejected (with the reason) or finally approved.

A bus subscriber (timebot.events.bus) on approvalEventUpdate: the notice (`timebot.owner_notice`)
is rendered from `owner_notice.*.j2` and queued in the outbox under a dedupe key derived from
the service event's id, in one statement (INSERT … ON CONFLICT DO NOTHING, no look-up
before): a retried or re-dispatched event, a second process or a restart queues nothing more.
The owner's name, address, language and formats come from the reply's read of the event when it was
made in the last seconds (`PeopleDirectory.recent_details`), else from getPerson.
Intermediate stage approvals send nothing.
"""

from __future__ import annotations

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from mail.outbound.reviews import MailContext, build_message
from timebot import l10n
from timebot.events.bus import APPROVAL_UPDATE, ServiceEvent, write_with_event
from timebot.notify.person_notify import EMAIL, gets
from timebot.owner_notice import load_owner, owner_notice, owner_notice_key

log = structlog.get_logger("mail.owner_notices")

KIND = "owner-notice"


class OwnerNotices:
    """The bus subscriber for the owner's notices by e-mail."""

    handles = (APPROVAL_UPDATE,)

    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx
        self.runtime = ctx.runtime

    async def __call__(self, event: ServiceEvent) -> None:
        if event.event == APPROVAL_UPDATE:
            await self.handle(event)

    async def handle(self, event: ServiceEvent) -> bool:
        """True when a notice was queued by this call, or handed to the event worker to be
        queued with the event's done mark (`timebot.events.bus.write_with_event`; its dedupe key
        refuses a second one)."""
        if owner_notice(event.data, None) is None:
            return False  # not a decision the owner is told about
        dedupe = owner_notice_key(event.delivery_id)
        runtime = self.runtime
        key = await runtime.directory.integration_key(event.organisation_id)
        owner_id = str((event.data.get("person") or {}).get("id"))
        owner = await load_owner(runtime.client, key, owner_id, runtime.directory)
        if owner is None or not owner.email or not gets(owner.notify, "ownerNotice", EMAIL):
            return False
        with l10n.using(owner.localisation):  # in the owner's language and formats
            notice = owner_notice(event.data, owner.localisation)
            if notice is None:
                return False
            rendered = self.ctx.templates.mail("owner_notice", notice=notice,
                                               owner_name=owner.name)
        message = build_message(runtime.settings, rendered, to=owner.email)
        outbox, kind = self.ctx.mail.outbox, notice.kind
        queued: list[bool] = []

        async def queue(session: AsyncSession) -> None:
            queued.append(await outbox.enqueue(
                message, kind=KIND, envelope_from=runtime.settings.mail_from,
                dedupe_key=dedupe, session=session))
            if queued[-1]:
                log.debug("owner_notice_queued", kind=kind, submit=event.data.get("submitId"))

        def written() -> None:
            if any(queued):
                self.ctx.mail.outbox_worker.wake_express()

        # Dispatched by the event worker: with the event's done mark, in one commit.
        deferred = await write_with_event(outbox.sessions, queue, written)
        return deferred or any(queued)
