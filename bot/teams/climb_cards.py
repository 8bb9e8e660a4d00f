"""The climbing reminder as a Teams card (issue 28 in Teams): told to the approver's people
manager (or an administrator) when a stage waited twice the approval-reminder interval. It says
who has not decided whose timesheet since when (and why, when the approver is away) and what
the reader can do (`timebot.notify.escalations.climb_paragraphs`, as mail and Slack say it);
only an administrator, who may decide, gets the review card's Approve / Reject below it
(settled on the service's event like a review card: its ref is the same). Queued once under
`teams-climb:<dedupe key>`."""

from __future__ import annotations

from bot.chat.approvals import ref_of, request_of
from bot.chat.nudges import climb_message
from bot.chat.reach import reach
from bot.teams import cards, render
from bot.teams.installs import TeamsInstaller
from bot.teams.outgoing import Recipient, TeamsOutbox
from bot.teams.render import TEAMS
from bot.teams.reviews import context_of
from bot.teams.tenants import TeamsTenants
from timebot import l10n
from timebot.notify.escalations import ClimbRequest
from timebot.process.runtime import Runtime


def climb_key(dedupe_key: str) -> str:
    return f"teams-climb:{dedupe_key}"


class TeamsClimbs:
    """Teams' `timebot.notify.escalations.ClimbChannel`."""

    def __init__(self, runtime: Runtime, tenants: TeamsTenants, outbox: TeamsOutbox,
                 installer: TeamsInstaller | None = None) -> None:
        self.runtime, self.tenants, self.outbox = runtime, tenants, outbox
        self.installer = installer  # reaches who never wrote (bot.teams.installs)

    async def already_sent(self, dedupe_key: str) -> bool:
        return await self.outbox.queued_with_key(climb_key(dedupe_key)) is not None

    async def climb_request(self, request: ClimbRequest) -> bool:
        user = await self.tenants.user_of_person(request.organisation_id, request.recipient_id)
        if user is None and self.installer is not None:  # never wrote: installed, then sent
            self.installer.later(request.organisation_id, request.recipient_id,
                                 lambda: self.climb_request(request))
        if user is None or not user.conversation_id or not user.service_url:
            return False
        reader = await reach(self.runtime, request.organisation_id, request.recipient_id)
        if reader is None:
            return False
        summary = request.summary
        shown = request_of(request)
        with l10n.using(reader):
            said = climb_message(request, TEAMS)
        refresh = (render.refresh_block(shown.encode(), [user.teams_user_id])
                   if request.may_decide else None)
        activity = cards.message(render.card_of(said, refresh), render.preview(said))
        to = Recipient(user.tenant_id, user.organisation_id, user.conversation_id,
                       user.service_url)
        if not request.may_decide:
            return await self.outbox.send(to, activity, key=climb_key(request.dedupe_key))
        return await self.outbox.send(
            to, activity, key=climb_key(request.dedupe_key),
            ref=ref_of(request.submit_id, request.stage, request.recipient_id),
            context=context_of(shown, request.organisation_id, summary.person_name,
                               request.recipient_id))
