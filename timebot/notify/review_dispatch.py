"""The bus subscriber that asks approvers, on every channel at once: on an approvalEventUpdate
it makes the review-request decision (`timebot.notify.reviews`) once, and hands each request
to every registered channel (`ReviewChannel`: mail's e-mail, the bot's DM) that has not sent
it yet.

A request counts as sent only when every channel sent it, so a channel that failed is asked
again when the event is dispatched again. A failing channel does not stop the others: the
dispatch goes on, then raises `ReviewChannelFailed`, and the event worker retries the event
(timebot.events.bus); the dedupe keys make the retry send nothing twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import structlog

from timebot.errors import TimebotError
from timebot.events.bus import APPROVAL_UPDATE, ServiceEvent
from timebot.notify.decisions import ReviewChannel, ReviewRequest
from timebot.notify.escalations import ClimbChannel, ClimbRequest
from timebot.notify.ground import Ground
from timebot.notify.reviews import review_requests

log = structlog.get_logger("timebot.notify.review_dispatch")


class ReviewChannelFailed(TimebotError):
    """One or more review channels failed on an event; `.errors` holds what each raised."""

    def __init__(self, errors: list[Exception]) -> None:
        super().__init__("; ".join(f"{type(e).__name__}: {e}" for e in errors))
        self.errors = errors


class ReviewDispatch:
    handles = (APPROVAL_UPDATE,)  # the events __call__ reads

    def __init__(self, runtime: Ground) -> None:
        self.runtime = runtime
        self.channels: list[ReviewChannel] = []
        self.climb_channels: list[ClimbChannel] = []  # the climbing reminders' (issue 28)

    def add_channel(self, channel: ReviewChannel) -> None:
        self.channels.append(channel)

    def add_climb_channel(self, channel: ClimbChannel) -> None:
        self.climb_channels.append(channel)

    async def __call__(self, event: ServiceEvent) -> None:
        if event.event == APPROVAL_UPDATE:
            await self.handle(event)

    async def handle(self, event: ServiceEvent) -> int:
        """Ask the approvers the event calls for; returns how many requests were queued, all
        channels together."""
        errors: list[Exception] = []
        unsent: dict[str, list[ReviewChannel]] = {}

        async def already_sent(dedupe_key: str) -> bool:
            unsent[dedupe_key] = []
            for channel in self.channels:
                try:
                    if not await channel.already_sent(dedupe_key):
                        unsent[dedupe_key].append(channel)
                except Exception as error:
                    log.exception("review_channel_failed", channel=type(channel).__name__)
                    errors.append(error)
            return not unsent[dedupe_key]

        queued = 0
        for request in await review_requests(self.runtime, event, already_sent):
            for channel in unsent[request.dedupe_key]:
                try:
                    queued += await channel.review_request(request)
                except Exception as error:
                    log.exception("review_channel_failed", channel=type(channel).__name__,
                                  submit=request.submit_id, approver=request.approver_id)
                    errors.append(error)
        if errors:
            raise ReviewChannelFailed(errors) from errors[0]
        return queued

    async def deliver(self, requests: list[ReviewRequest]) -> int:
        """Hand requests decided elsewhere (timebot.notify.escalation_tick) to every channel
        that has not sent them (by dedupe key); returns how many were queued. Raises
        `ReviewChannelFailed` after trying them all when a channel failed."""
        return await _deliver_each(self.channels, requests,
                                   lambda channel, request: channel.review_request(request))

    async def unsent(self, dedupe_key: str) -> bool:
        """Whether some channel has not sent this request yet."""
        return not all([await channel.already_sent(dedupe_key) for channel in self.channels])

    async def climb_unsent(self, dedupe_key: str) -> bool:
        return not all([await c.already_sent(dedupe_key) for c in self.climb_channels])

    async def deliver_climbs(self, requests: list[ClimbRequest]) -> int:
        """`deliver` for climbing reminders (timebot.notify.escalation_tick)."""
        return await _deliver_each(self.climb_channels, requests,
                                   lambda channel, request: channel.climb_request(request))


async def _deliver_each(channels: Sequence[Any], requests: Sequence[Any],
                        send: Callable[[Any, Any], Awaitable[int]]) -> int:
    """Each request to each channel that has not sent it (by its dedupe key); the channels
    are all tried, then `ReviewChannelFailed` is raised when one failed."""
    errors: list[Exception] = []
    queued = 0
    for request in requests:
        for channel in channels:
            try:
                if not await channel.already_sent(request.dedupe_key):
                    queued += await send(channel, request)
            except Exception as error:
                log.exception("review_channel_failed", channel=type(channel).__name__,
                              submit=request.submit_id, key=request.dedupe_key)
                errors.append(error)
    if errors:
        raise ReviewChannelFailed(errors) from errors[0]
    return queued
