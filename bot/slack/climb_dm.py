"""The climbing reminder as a Slack DM (issue 28): told to the approver's people manager (or
an administrator) when a stage waited twice the approval-reminder interval. It says who has
not decided whose timesheet since when (and why, when the approver is away) and what the
reader can do; only an administrator, who may decide, gets the Approve / Reject buttons
(bot.slack.approvals settles them as it does a review DM's). Queued in the Slack sender under
`climb-dm:<dedupe key>`, once."""

from __future__ import annotations

from typing import Any

from bot.chat.approvals import Request, ref_of
from bot.slack.approval_blocks import request_blocks, summary_text
from bot.slack.deps import SlackDeps
from bot.slack.mrkdwn import escape
from timebot import l10n
from timebot.l10n import _
from timebot.l10n.loading import load_localisation
from timebot.notify.approvals import period_label
from timebot.notify.escalations import ClimbRequest, climb_paragraphs
from timebot.notify.person_notify import SLACK, gets, person_notify
from timebot.stages import stage_label


def climb_dm_key(dedupe_key: str) -> str:
    return f"climb-dm:{dedupe_key}"


class ClimbDMs:
    """The bot's `timebot.notify.escalations.ClimbChannel`."""

    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def already_sent(self, dedupe_key: str) -> bool:
        return await self.deps.sender.queued_with_key(climb_dm_key(dedupe_key)) is not None

    async def climb_request(self, request: ClimbRequest) -> bool:
        if not await self.deps.workspace.serves(request.organisation_id):
            return False
        user = await self.deps.identity.slack_user_for(request.recipient_id)
        if user is None:
            return False
        runtime = self.deps.runtime
        key = await runtime.directory.integration_key(request.organisation_id)
        notify = await person_notify(runtime.client, key, request.recipient_id)
        if not gets(notify.settings, "review", SLACK):
            return False
        summary = request.summary
        shown = Request(request.submit_id, request.stage, "", summary.person_id,
                        summary.start_ms, summary.end_ms)
        with l10n.using(await load_localisation(runtime.client, key, request.recipient_id)):
            period = period_label(summary.start_ms, summary.end_ms, summary.time_zone)
            said = [escape(p) for p in climb_paragraphs(request, period)]
            text = " ".join(said)
            blocks: list[dict[str, Any]] = [
                {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(said)}}]
            if request.may_decide:  # an administrator: the review DM's buttons
                label = (stage_label(request.stage, request.stage_count)
                         if request.stage_count > 1 else _("approval"))
                _text, decide = request_blocks(shown, summary.person_name, label,
                                               summary_text(summary))
                blocks.extend(decide)
        if not request.may_decide:
            return await self.deps.sender.post(user, text, blocks,
                                               key=climb_dm_key(request.dedupe_key), bulk=True)
        context = {"timesheetId": "", "personId": shown.person_id,
                   "submitId": shown.submit_id, "organisationId": request.organisation_id,
                   "startTime": shown.start_ms, "endTime": shown.end_ms,
                   "personName": summary.person_name, "approverId": request.recipient_id}
        return await self.deps.sender.post(
            user, text, blocks, key=climb_dm_key(request.dedupe_key),
            ref=ref_of(request.submit_id, request.stage, request.recipient_id), context=context,
            bulk=True)


def register(deps: SlackDeps) -> ClimbDMs:
    """A climb channel of the review dispatch (through `deps.hub`)."""
    channel = ClimbDMs(deps)
    deps.hub.add_climb_channel(channel)
    return channel
