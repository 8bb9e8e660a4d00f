"""Review requests as Slack DMs: the bot's channel of the ground's review dispatch
(`timebot.notify.review_dispatch`), which decides who is asked.

An approver who is in Slack gets the summary with Approve / Reject buttons, queued in the
Slack sender under a key derived from the request's dedupe key (submission, stage, approver
and a restart's round), so it goes out once whichever delivery brought the event: the
webhook, the reconciler or the poller. The message's ref and context are what bot.slack.approvals
settles in place and decides by. The digest preference is mail's: the DM goes regardless,
unless the approver turned Slack (push) or approval updates off (`notificationSettings`).
"""

from __future__ import annotations

from bot.chat.approvals import ref_of, request_of
from bot.chat.reach import reach
from bot.slack.approval_blocks import request_blocks, summary_text
from bot.slack.deps import SlackDeps
from bot.slack.mrkdwn import escape
from timebot import l10n
from timebot.l10n import _
from timebot.notify.decisions import ReviewRequest
from timebot.stages import stage_label


def dm_key(dedupe_key: str) -> str:
    """The Slack sender's key of the DM asking a review request (its dedupe key)."""
    return f"approval-dm:{dedupe_key}"


class ReviewDMs:
    """The bot's review channel (`timebot.notify.decisions.ReviewChannel`)."""

    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def already_sent(self, dedupe_key: str) -> bool:
        return await self.deps.sender.queued_with_key(dm_key(dedupe_key)) is not None

    async def review_request(self, request: ReviewRequest) -> bool:
        """DM the approver; False when it was queued before, they are not in Slack, or the
        workspace does not serve their organisation (then Slack is not even asked)."""
        if not await self.deps.workspace.serves(request.organisation_id):
            return False
        user = await self.deps.identity.slack_user_for(request.approver_id)
        if user is None:
            return False
        reader = await reach(self.deps.runtime, request.organisation_id, request.approver_id)
        if reader is None:
            return False
        summary = request.summary
        shown = request_of(request, request.timesheet_id)
        with l10n.using(reader):
            label = (stage_label(request.stage, request.stage_count) if request.stage_count > 1
                     else _("approval"))
            text, blocks = request_blocks(shown, summary.person_name, label,
                                          summary_text(summary))
            if request.reason is not None:  # another approver is away (notify.away_asks)
                reason = escape(request.reason.text())  # in the approver's formats
                text = f"{reason}: {text}"
                blocks = [{"type": "context", "elements": [{"type": "mrkdwn", "text": _(
                    "{reason}: you are asked too.").format(reason=reason)}]},
                    *blocks]
        context = {"timesheetId": shown.timesheet_id, "personId": shown.person_id,
                   "submitId": shown.submit_id, "organisationId": request.organisation_id,
                   "startTime": shown.start_ms, "endTime": shown.end_ms,
                   "personName": summary.person_name, "approverId": request.approver_id}
        return await self.deps.sender.post(
            user, text, blocks, key=dm_key(request.dedupe_key),
            ref=ref_of(request.submit_id, request.stage, request.approver_id), context=context,
            bulk=True,
        )


def register(deps: SlackDeps) -> ReviewDMs:
    """A channel of the review dispatch only (through `deps.hub`): it adds no listener to the
    Slack app."""
    channel = ReviewDMs(deps)
    deps.hub.add_channel(channel)
    return channel
