"""The end-of-period reminder mentions the automatic timesheet's pending suggested entries and
their hours, read over GraphQL from the service; nothing when it is off for the person."""

from __future__ import annotations

from tests.mail.reviews_support import WEEK, WEEK_END, jobs, mails, runtime_of, text_part
from tests.service.auto_timesheet_support import DISABLE, RECORD, auto_board, owned_task, worked
from tests.support import DAY_MS, HOUR_MS, Org
from timebot.notify.suggestions import Pending, pending_of


def test_pending_of_counts_and_sums() -> None:
    assert pending_of(None) == Pending(0, 0)
    assert pending_of([{"duration": 3_600_000}, None, {"duration": 1_800_000}]) == Pending(
        2, 5_400_000)


async def test_the_period_reminder_mentions_pending_suggestions(org: Org) -> None:
    runtime = runtime_of(org)
    org.live.clock.set(WEEK)
    sam = await org.add_member("Sam Suggested")
    off = await org.add_member("Olga Off")
    board = await auto_board(org)
    await org.admin.gql(DISABLE, {"id": off.id})
    for member in (sam, off):
        build = await owned_task(org, board, member, f"Build {member.name}")
        review = await owned_task(org, board, member, f"Review {member.name}")
        await worked(org, board, build, WEEK + 10 * HOUR_MS, WEEK + 15 * HOUR_MS)
        await worked(org, board, review, WEEK + DAY_MS + 9 * HOUR_MS,
                     WEEK + DAY_MS + 11 * HOUR_MS)
        await member.gql(RECORD, {"s": WEEK + 11 * HOUR_MS, "d": HOUR_MS, "p": member.id,
                                  "t": build})

    runtime.clock.set(WEEK_END)
    await jobs(org).scheduler.period_reminders(org.id)
    [to_sam] = await mails(runtime, sam, "timesheet-reminder")
    assert "2 suggested entries (6h) wait for you." in text_part(to_sam)
    assert "2 suggested entries (6h) wait for you." in str(
        to_sam.get_body(preferencelist=("html",)))
    [to_off] = await mails(runtime, off, "timesheet-reminder")
    assert "suggested" not in text_part(to_off)
