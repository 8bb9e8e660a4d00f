"""Due saved reports as Slack DMs: the bot's channel of the scheduler's due reports
(timebot/notify/due_reports.py). Each address to notify that is a person linked to a Slack
user of a workspace serving the organisation gets the figures, queued in the Slack sender
under the occurrence's key for that address, so it goes out once."""

from __future__ import annotations

from bot.slack.deps import SlackDeps
from bot.slack.mrkdwn import escape
from timebot.errors import UnknownPerson
from timebot.l10n import _, format_hours, using
from timebot.notify.approvals import period_label, time_zone_of
from timebot.notify.due_reports import DueReport


def report_text(due: DueReport, public_url: str) -> str:
    """The figures in the owner's localisation (as they see them)."""
    local = due.localisation
    period = period_label(due.occurrence.start_ms, due.occurrence.end_ms,
                          time_zone_of(due.owner), local)
    lines = [f"*{escape(due.name)}*, {period}"]
    lines += [f"• {escape(label)}: {format_hours(hours, local)} h" for label, hours in due.rows]
    with using(local):
        lines.append(f"{_('Total:')} {format_hours(due.total_hours, local)} h")
        link = due.link(public_url)
        if link is not None:
            # (its query's `&` too: Slack reads `&amp;` back as `&`)
            lines.append(f"<{escape(link)}|{escape(_('Open the report'))}>")
    return "\n".join(lines)


class ReportDMs:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def due_report(self, due: DueReport) -> int:
        if not await self.deps.workspace.serves(due.organisation_id):
            return 0
        sent = 0
        for address in due.emails:
            try:
                entry = await self.deps.runtime.directory.find_by_email(
                    address, due.organisation_id)
            except UnknownPerson:
                continue
            user = await self.deps.identity.slack_user_for(entry.person_id, address)
            if user is None:
                continue
            text = report_text(due, self.deps.runtime.settings.public_url)
            if await self.deps.sender.post(user, text, None,
                                           key=f"report-dm:{due.dedupe_key(address)}",
                                           bulk=True):
                sent += 1
        return sent


def register(deps: SlackDeps) -> ReportDMs:
    """A channel of the scheduler only (through `deps.hub`: where the runtime has the
    notification jobs)."""
    part = ReportDMs(deps)
    deps.hub.add_report_channel(part)
    return part
