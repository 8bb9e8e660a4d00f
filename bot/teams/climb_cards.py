"""The climbing reminder as a Teams card (issue 28 in Teams): told to the approver's people
manager (or an administrator) when a stage waited twice the approval-reminder interval. It says
who has not decided whose timesheet since when (and why, when the approver is away) and what
the reader can do (`timebot.notify.escalations.climb_paragraphs`, as mail and Slack say it);
only an administrator, who may decide, gets the review card's Approve / Reject below it
(settled on the service's event like a review card: its ref is the same). Queued once under
`teams-climb:<dedupe key>`."""

from __future__ import annotations

from bot.chat.approvals import Request, ref_of
from bot.teams import cards, render
from bot.teams.outgoing import Recipient, TeamsOutbox
from bot.teams.render import TEAMS
from bot.teams.reviews import PUSH, context_of, request_card
from bot.teams.tenants import TeamsTenants
from timebot import l10n
from timebot.l10n import _
from timebot.l10n.loading import load_localisation
from timebot.notify.approvals import period_label
from timebot.notify.escalations import ClimbRequest, climb_paragraphs
from timebot.notify.person_notify import gets, person_notify
from timebot.runtime import Runtime
from timebot.stages import stage_label


def climb_key(dedupe_key: str) -> str:
    return f"teams-climb:{dedupe_key}"


class TeamsClimbs:
    """Teams' `timebot.notify.escalations.ClimbChannel`."""

    def __init__(self, runtime: Runtime, tenants: TeamsTenants, outbox: TeamsOutbox) -> None:
        self.runtime, self.tenants, self.outbox = runtime, tenants, outbox

    async def already_sent(self, dedupe_key: str) -> bool:
        return await self.outbox.queued_with_key(climb_key(dedupe_key)) is not None

    async def climb_request(self, request: ClimbRequest) -> bool:
        user = await self.tenants.user_of_person(request.organisation_id, request.recipient_id)
        if user is None or not user.conversation_id or not user.service_url:
            return False
        runtime = self.runtime
        key = await runtime.directory.integration_key(request.organisation_id)
        notify = await person_notify(runtime.client, key, request.recipient_id)
        if not gets(notify.settings, "review", PUSH):
            return False
        summary = request.summary
        shown = Request(request.submit_id, request.stage, "", summary.person_id,
                        summary.start_ms, summary.end_ms)
        with l10n.using(await load_localisation(runtime.client, key, request.recipient_id)):
            said = climb_paragraphs(request, period_label(summary.start_ms, summary.end_ms,
                                                          summary.time_zone))
            decide, refresh = None, None
            if request.may_decide:  # an administrator: the review card's buttons
                label = (stage_label(request.stage, request.stage_count)
                         if request.stage_count > 1 else _("approval"))
                decide, asked = request_card(shown, summary.person_name, label, summary,
                                             user.teams_user_id)
                refresh = asked.get("refresh")
            notice = cards.notice_message(said, TEAMS, decide)
            card = render.card_of(notice, refresh)
        to = Recipient(user.tenant_id, user.organisation_id, user.conversation_id,
                       user.service_url)
        if not request.may_decide:
            return await self.outbox.send(to, cards.message(card, " ".join(said)),
                                          key=climb_key(request.dedupe_key))
        return await self.outbox.send(
            to, cards.message(card, " ".join(said)), key=climb_key(request.dedupe_key),
            ref=ref_of(request.submit_id, request.stage, request.recipient_id),
            context=context_of(shown, request.organisation_id, summary.person_name,
                               request.recipient_id))
