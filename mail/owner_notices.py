"""The owner's e-mail when their timesheet is rejected (with the reason) or finally approved.

A bus subscriber (timebot.events) on approvalEventUpdate: the notice (`timebot.owner_notice`)
is rendered from `owner_notice.*.j2` and queued in the outbox under a dedupe key derived from
the service event's id, in one statement (INSERT … ON CONFLICT DO NOTHING, no look-up
before): a retried or re-dispatched event, a second process or a restart queues nothing more.
The owner's name, address, language and formats come from the reply's read of the event when it was
made in the last seconds (`PeopleDirectory.recent_details`), else from getPerson.
Intermediate stage approvals send nothing.
"""

from __future__ import annotations

import structlog

from mail.reviews import MailContext, build_message
from timebot import l10n
from timebot.events import APPROVAL_UPDATE, ServiceEvent
from timebot.notify.person_notify import EMAIL, gets
from timebot.owner_notice import load_owner, owner_notice, owner_notice_key

log = structlog.get_logger("mail.owner_notices")

KIND = "owner-notice"


class OwnerNotices:
    """The bus subscriber for the owner's notices by e-mail."""

    def __init__(self, ctx: MailContext) -> None:
        self.ctx = ctx
        self.runtime = ctx.runtime

    async def __call__(self, event: ServiceEvent) -> None:
        if event.event == APPROVAL_UPDATE:
            await self.handle(event)

    async def handle(self, event: ServiceEvent) -> bool:
        """True when a notice was queued by this call."""
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
        queued: bool = await self.ctx.mail.outbox.enqueue(
            message, kind=KIND, envelope_from=runtime.settings.mail_from, dedupe_key=dedupe
        )
        if queued:
            self.ctx.mail.outbox_worker.wake()
            log.debug("owner_notice_queued", kind=notice.kind, submit=event.data.get("submitId"))
        return queued
