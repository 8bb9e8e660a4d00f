"""`submit` by mail to time@ (swaks to a live timebot, both backends): the sender's week is
submitted into the approval workflow, the receipt says so; `submit last` submits last week; a
second `submit` says it is already submitted; an unverified sender submits nothing."""

from __future__ import annotations

from tests.protocol.test_time_entry_mail import (
    fx,
    receipt_to,
    server,
    swaks,
    text_of,
    unanswered,
)
from tests.support import LiveServer
from tests.timebot.timeentry_setup import MONDAY_BERLIN_MS, WEEK_MS, Fixture, require_approval

__all__ = ["fx", "server"]  # the fixtures, shared with the time entry tests

STATE = """query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
  getApprovalState(personId: $p, startTime: $s, endTime: $e) { status } }"""


async def status(fx: Fixture, start_ms: int) -> str:
    data = await fx.org.admin.gql(
        STATE, {"p": fx.employee.id, "s": start_ms, "e": start_ms + WEEK_MS})
    return str(data["getApprovalState"]["status"])


async def test_submit_by_mail(server: tuple[LiveServer, int], fx: Fixture) -> None:
    live, port = server
    await require_approval(fx.org)
    sender = fx.employee.email
    await swaks(port, sender, "2h @acme", subject="hours")
    assert text_of(await receipt_to(live, sender)).startswith("Logged 1 entry")

    await swaks(port, sender, "Submit\n\n-- \nErin\n", subject="submit")
    body = text_of(await receipt_to(live, sender, count=2))
    assert body.startswith(
        "Timesheet for the week of Mon 16 Mar 2026 to Sun 22 Mar 2026 submitted for approval.")
    assert await status(fx, MONDAY_BERLIN_MS) == "s"

    await swaks(port, sender, "submit", subject="again")
    body = text_of(await receipt_to(live, sender, count=3))
    assert body.startswith("Not submitted:"), body

    await swaks(port, sender, "submit last", subject="last week")
    body = text_of(await receipt_to(live, sender, count=4))
    assert body.startswith(
        "Timesheet for the week of Mon 9 Mar 2026 to Sun 15 Mar 2026 submitted"), body
    assert await status(fx, MONDAY_BERLIN_MS - WEEK_MS) == "s"


async def test_an_unverified_submit_changes_nothing(
    server: tuple[LiveServer, int], fx: Fixture
) -> None:
    live, port = server
    await require_approval(fx.org)
    message_id = await swaks(port, fx.employee.email, "submit", verified=False)
    assert (await unanswered(live, message_id)).startswith("sender-not-verified; no receipt")
    assert await status(fx, MONDAY_BERLIN_MS) == "d"
