"""What the notification decisions return, and the channels that render and send them.

A decision (`timebot.notify.reviews`, `timebot.notify.period_reminders`) says who is told
what, and why, knowing neither MIME nor Block Kit; a channel (mail's e-mail, the bot's Slack
DM) renders each record and queues it under a key derived from the record's dedupe key, so
that it goes out once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from timebot.notify.away_asks import AwayReason
from timebot.notify.periods import Period
from timebot.notify.suggestions import ReminderReads
from timebot.summary import TimesheetSummary

# Whether the channel already queued the notification of this dedupe key.
AlreadySent = Callable[[str], Awaitable[bool]]
# Which of these dedupe keys were sent: one read for a page of people's notifications.
SentAmong = Callable[[list[str]], Awaitable[set[str]]]


@dataclass(frozen=True)
class ReviewRequest:
    """Approver `approver_id` is asked about submission `submit_id` at `stage`."""

    organisation_id: str
    submit_id: str
    timesheet_id: str  # "" when the event did not name it (a reconciled one)
    stage: int
    stage_count: int
    approver_id: str
    summary: TimesheetSummary  # of the person who submitted, for the submitted period
    dedupe_key: str
    digest: bool  # the approver chose the daily digest: it lists the request instead
    # why this approver is asked besides the stage's own way ("Grace is away until …"),
    # written in the approver's formats when the request is
    reason: AwayReason | None = None


@dataclass(frozen=True)
class PeriodReminder:
    """`person` (as `timebot.notify.approvals.PERSON` reads it) is reminded to submit
    `period`, whose timesheet is `status` ("d" draft, "r" rejected) with `entries` records."""

    organisation_id: str
    person: dict[str, Any]
    period: Period
    status: str
    entries: int
    total_ms: int
    dedupe_key: str
    # The mail's reads of the person, read with the verdict's (None: the mail reads them).
    reads: ReminderReads | None = None


class ReviewChannel(Protocol):
    """A way of asking approvers (mail's e-mail, the bot's DM); it registers with the review
    dispatch (`timebot.notify.review_dispatch`), which decides once for all of them."""

    async def already_sent(self, dedupe_key: str) -> bool: ...

    async def review_request(self, request: ReviewRequest) -> bool:
        """Render and queue the request; False when it was queued before, or this channel
        does not reach the approver."""
        ...


class Channel(Protocol):
    """A way of telling people (mail implements it); the scheduler calls it."""

    async def sent_among(self, dedupe_keys: list[str]) -> set[str]:
        """The keys of `dedupe_keys` whose notification this channel has queued."""
        ...

    async def period_reminder(self, reminder: PeriodReminder) -> bool:
        """Render and queue the reminder; False when it was queued before."""
        ...

    def bulk(self) -> AbstractAsyncContextManager[object]:
        """Around a run of reminders: what they queue may be written in short batches, at its
        end at the latest (a bulk run takes the write lock once a batch, not once a
        reminder: issue #40)."""
        ...

    async def daily_digests(self) -> int:
        """Send the digests due now; returns how many were queued."""
        ...
