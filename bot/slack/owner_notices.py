"""The owner's Slack DM when their timesheet is rejected (with the reason) or finally
approved — beside the e-mail (`mail.outbound.owner_notices`), for owners linked to a Slack user.

A bus subscriber on approvalEventUpdate; the DM is queued in the Slack queue under the
dedupe key of the service event (`timebot.owner_notice.owner_notice_key`), so it is posted
once however often the event is dispatched.
"""

from __future__ import annotations

from bot.slack.deps import SlackDeps
from bot.slack.mrkdwn import escape
from timebot import l10n
from timebot.events.bus import APPROVAL_UPDATE, ServiceEvent
from timebot.notify.person_notify import SLACK, gets
from timebot.owner_notice import load_owner, owner_notice, owner_notice_key


class OwnerNoticesPart:
    handles = (APPROVAL_UPDATE,)

    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def on_event(self, event: ServiceEvent) -> None:
        if event.event != APPROVAL_UPDATE or owner_notice(event.data, None) is None:
            return
        if not await self.deps.workspace.serves(event.organisation_id):
            return  # another organisation's owner, or uninstalled: not Slack's
        runtime = self.deps.runtime
        key = await runtime.directory.integration_key(event.organisation_id)
        owner_id = str((event.data.get("person") or {}).get("id"))
        owner = await load_owner(runtime.client, key, owner_id, runtime.directory)
        if owner is None or not gets(owner.notify, "ownerNotice", SLACK):
            return
        with l10n.using(owner.localisation):  # in the owner's language and formats
            notice = owner_notice(event.data, owner.localisation)
            text = notice.text() if notice is not None else ""
        if notice is None:
            return
        user = await self.deps.identity.slack_user_for(owner.person_id, owner.email)
        if user is None:
            return
        # The notice's text is plain (mail's too): its names and reason are escaped here.
        await self.deps.sender.post(user, escape(text), key=owner_notice_key(event.delivery_id))


def register(deps: SlackDeps) -> OwnerNoticesPart:
    """A bus subscriber only: it adds no listener to the Slack app."""
    part = OwnerNoticesPart(deps)
    deps.hub.subscribe("slack-owner-notices", part.on_event, part.handles)
    return part
