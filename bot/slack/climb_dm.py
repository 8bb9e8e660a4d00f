"""The climbing reminder as a Slack DM (issue 28): told to the approver's people manager (or
an administrator) when a stage waited twice the approval-reminder interval. It says who has
not decided whose timesheet since when (and why, when the approver is away) and what the
reader can do; only an administrator, who may decide, gets the Approve / Reject buttons
(bot.slack.approvals settles them as it does a review DM's). Queued in the Slack sender under
`climb-dm:<dedupe key>`, once."""

from __future__ import annotations

from bot.chat.approvals import ref_of, request_of
from bot.chat.nudges import climb_message
from bot.chat.reach import reach
from bot.slack.deps import SlackDeps
from bot.slack.render import SLACK as SLACK_MARKUP
from bot.slack.render import blocks_of
from timebot import l10n
from timebot.notify.escalations import ClimbRequest


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
        reader = await reach(self.deps.runtime, request.organisation_id, request.recipient_id)
        if reader is None:
            return False
        summary = request.summary
        shown = request_of(request)
        with l10n.using(reader):
            message = climb_message(request, SLACK_MARKUP)
            text, blocks = message.text, blocks_of(message)
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
