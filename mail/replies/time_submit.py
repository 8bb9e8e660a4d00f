"""`submit` by mail: a mail to time@ whose only line is `submit` (this period: the sender's
`periodicity`, a week by default) or `submit last` (the last period) submits the sender's
timesheet, as `/timesheet submit [last]` does in Slack. The sender is verified exactly as for
time entries (mail.replies.time_entry); the receipt says what happened. A retried mail (a crash
before its receipt was queued) finds the timesheet already submitted and says so; the receipt is
still queued once per mail."""

from __future__ import annotations

from timebot.l10n import _

SUBMIT_LINES = {
    "submit": False, "submit this week": False, "submit last": True, "submit last week": True,
    "submit this period": False, "submit last period": True,
    "submit this month": False, "submit last month": True,
}


def submit_request(lines: list[str]) -> bool | None:
    """Pure: None when the mail is not a submit command, else whether it means last week."""
    if len(lines) != 1:
        return None
    return SUBMIT_LINES.get(" ".join(lines[0].lower().rstrip(".!").split()))


def submit_receipt(answer: str, zone: str) -> str:
    """Pure: the receipt's text around the service's answer."""
    return "\n".join([
        answer, "", _("(Periods read in your time zone, {zone}.)").format(zone=zone),
        _("Write `submit last` to submit the last period's timesheet instead."),
        "", "-- ", _("timebot (this is an automatic answer to your e-mail)"),
    ]) + "\n"
