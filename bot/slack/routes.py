"""Where the ground's events and requests reach the bots of the OAuth installations: once for
all of them, routed by organisation.

Each installation's bot (bot.slack.installations) serves one organisation. Registered one by one,
its parts would be N subscribers of the bus and N channels of the review dispatch and of the
report scheduler, each asked about every event of every organisation only to find it is not
its own — and each asking the database first (its Slack queue, its workspace): with 100
workspaces, a review request cost 100 queue look-ups and an approval update 100 reads of
sent DMs, every one queued for SQLite's write lock ahead of the acks (#27).

So the installations' parts register here (`OrganisationRoutes.hub(organisation_id)`), and
the routes register once on the runtime: one bus subscriber per part, one review, one climb
and one report channel, each handing an event or request to the parts of the bots serving
its organisation only (none: nothing is done, as those bots' own checks would have decided).

SLACK_BOT_TOKEN's bot registers directly (`DirectHub`): it is one, and it decides itself
which organisation it serves.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol, TypeVar

from timebot.events.bus import EventBus, ServiceEvent, Subscriber
from timebot.notify.decisions import ReviewChannel, ReviewRequest
from timebot.notify.due_reports import DueReport, ReportChannel
from timebot.notify.escalations import ClimbChannel, ClimbRequest


class ReviewChannels(Protocol):
    """What a part's channel registers with (the review dispatch, or routes)."""

    def add_channel(self, channel: ReviewChannel) -> None: ...

    def add_climb_channel(self, channel: ClimbChannel) -> None: ...


class ReportChannels(Protocol):
    def add_report_channel(self, channel: ReportChannel) -> None: ...


class Hub(Protocol):
    """What a bot's parts register with: bus subscribers, review and climb channels, report
    channels (bot.slack.deps.SlackDeps.hub)."""

    def subscribe(self, name: str, subscriber: Subscriber, events: Iterable[str]) -> None: ...

    def add_channel(self, channel: ReviewChannel) -> None: ...

    def add_climb_channel(self, channel: ClimbChannel) -> None: ...

    def add_report_channel(self, channel: ReportChannel) -> None: ...


class DirectHub:
    """SLACK_BOT_TOKEN's bot: its parts register on the runtime's bus and dispatch as they
    are (a report channel only where the notification jobs run)."""

    def __init__(self, bus: EventBus, reviews: ReviewChannels,
                 reports: ReportChannels | None) -> None:
        self.bus, self.reviews, self.reports = bus, reviews, reports

    def subscribe(self, name: str, subscriber: Subscriber, events: Iterable[str]) -> None:
        self.bus.subscribe(name, subscriber, events)

    def add_channel(self, channel: ReviewChannel) -> None:
        self.reviews.add_channel(channel)

    def add_climb_channel(self, channel: ClimbChannel) -> None:
        self.reviews.add_climb_channel(channel)

    def add_report_channel(self, channel: ReportChannel) -> None:
        if self.reports is not None:
            self.reports.add_report_channel(channel)


class OrganisationRoutes:
    """The installations' parts by organisation, registered once on the runtime."""

    def __init__(self, bus: EventBus, reviews: ReviewChannels,
                 reports: ReportChannels | None) -> None:
        self.bus, self.reports = bus, reports
        self.subscribers: dict[str, dict[str, list[Subscriber]]] = {}
        self.reviews: dict[str, list[ReviewChannel]] = defaultdict(list)
        self.climbs: dict[str, list[ClimbChannel]] = defaultdict(list)
        self.report_channels: dict[str, list[ReportChannel]] = defaultdict(list)
        reviews.add_channel(_RoutedReviews(self))
        reviews.add_climb_channel(_RoutedClimbs(self))
        self._reports_added = False

    def hub(self, organisation_id: str) -> OrganisationHub:
        """Where the parts of a bot serving `organisation_id` register."""
        return OrganisationHub(self, organisation_id)

    def subscribe(self, organisation_id: str, name: str, subscriber: Subscriber,
                  events: Iterable[str]) -> None:
        by_organisation = self.subscribers.get(name)
        if by_organisation is None:  # the part's one subscriber on the bus
            by_organisation = self.subscribers[name] = defaultdict(list)
            self.bus.subscribe(name, _routed_subscriber(by_organisation), events)
        by_organisation[organisation_id].append(subscriber)

    def add_report_channel(self, organisation_id: str, channel: ReportChannel) -> None:
        if self.reports is None:
            return
        if not self._reports_added:
            self._reports_added = True
            self.reports.add_report_channel(_RoutedReports(self))
        self.report_channels[organisation_id].append(channel)


def _routed_subscriber(by_organisation: dict[str, list[Subscriber]]) -> Subscriber:
    async def dispatch(event: ServiceEvent) -> None:
        for subscriber in list(by_organisation.get(event.organisation_id, ())):
            await subscriber(event)
    return dispatch


class OrganisationHub:
    """The `Hub` of one installation's bot."""

    def __init__(self, routes: OrganisationRoutes, organisation_id: str) -> None:
        self.routes, self.organisation_id = routes, organisation_id

    def subscribe(self, name: str, subscriber: Subscriber, events: Iterable[str]) -> None:
        self.routes.subscribe(self.organisation_id, name, subscriber, events)

    def add_channel(self, channel: ReviewChannel) -> None:
        self.routes.reviews[self.organisation_id].append(channel)

    def add_climb_channel(self, channel: ClimbChannel) -> None:
        self.routes.climbs[self.organisation_id].append(channel)

    def add_report_channel(self, channel: ReportChannel) -> None:
        self.routes.add_report_channel(self.organisation_id, channel)


C = TypeVar("C")


def _any_of(channels: dict[str, list[C]]) -> C | None:
    for listed in channels.values():
        if listed:
            return listed[0]
    return None


class _RoutedReviews:
    """The installations' review DMs as one channel of the review dispatch."""

    def __init__(self, routes: OrganisationRoutes) -> None:
        self.routes = routes

    async def already_sent(self, dedupe_key: str) -> bool:
        # The Slack queue's keys are the process's, whichever installation queued them: one
        # look-up answers for every bot (none installed: nothing to send).
        channel = _any_of(self.routes.reviews)
        return channel is None or await channel.already_sent(dedupe_key)

    async def review_request(self, request: ReviewRequest) -> bool:
        sent = False
        for channel in list(self.routes.reviews.get(request.organisation_id, ())):
            sent = await channel.review_request(request) or sent
        return sent


class _RoutedClimbs:
    """The installations' climbing reminders as one climb channel."""

    def __init__(self, routes: OrganisationRoutes) -> None:
        self.routes = routes

    async def already_sent(self, dedupe_key: str) -> bool:
        channel = _any_of(self.routes.climbs)
        return channel is None or await channel.already_sent(dedupe_key)

    async def climb_request(self, request: ClimbRequest) -> bool:
        sent = False
        for channel in list(self.routes.climbs.get(request.organisation_id, ())):
            sent = await channel.climb_request(request) or sent
        return sent


class _RoutedReports:
    def __init__(self, routes: OrganisationRoutes) -> None:
        self.routes = routes

    async def due_report(self, due: DueReport) -> int:
        return sum([await channel.due_report(due) for channel in list(
            self.routes.report_channels.get(due.organisation_id, ()))])
