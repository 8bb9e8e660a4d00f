"""Installs the Teams cards when the Teams front is on (bot.teams.component): the proactive
sender (its queue and worker), the review cards and climbing reminders as channels of the
review dispatch, their settling on the service's approval events, the `adaptiveCard/action`
invoke handler, the Journal of the cards (bot.teams.journal), the loop of the approver
nudges and digests, the approvers' away status read from Microsoft Graph
(bot.teams.away_status), and the app installed through Graph for a person who never wrote to
the bot (bot.teams.installs)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.teams.actions import CardActions
from bot.teams.away_status import TeamsAwayStatus
from bot.teams.climb_cards import TeamsClimbs
from bot.teams.component import teams_of
from bot.teams.installs import TeamsInstaller
from bot.teams.journal import TeamsJournal
from bot.teams.nudges import TeamsNudges
from bot.teams.outgoing import TeamsOutbox
from bot.teams.reminders import TeamsReminders
from bot.teams.reviews import TeamsReviews
from bot.teams.sender_worker import TeamsSenderWorker
from timebot.notify.review_dispatch import ReviewDispatch
from timebot.process.notifications import INSTALLED
from timebot.process.runtime import Runtime

ACTION_INVOKE = "adaptiveCard/action"


@dataclass(frozen=True)
class TeamsCards:
    outbox: TeamsOutbox
    worker: TeamsSenderWorker
    reviews: TeamsReviews
    actions: CardActions
    nudges: TeamsNudges
    away: TeamsAwayStatus
    installer: TeamsInstaller


_INSTALLED: dict[int, TeamsCards] = {}


def cards_of(runtime: Runtime) -> TeamsCards | None:
    return _INSTALLED.get(id(runtime))


def install_teams_cards(runtime: Runtime, reviews: ReviewDispatch) -> None:
    front = teams_of(runtime)
    if front is None:
        return
    worker = TeamsSenderWorker(runtime.state_sessions, runtime.read_sessions, front.connector)
    outbox = TeamsOutbox(runtime.state_sessions, runtime.read_sessions, runtime.clock,
                         wake=worker.wake)
    away = TeamsAwayStatus(runtime, front.graph)
    installer = TeamsInstaller(front.tenants, runtime.directory, front.graph, front.connector,
                               front.app_id)
    channel = TeamsReviews(runtime, front.tenants, outbox, away, installer)
    reviews.add_channel(channel)
    reviews.add_climb_channel(TeamsClimbs(runtime, front.tenants, outbox, installer))
    runtime.bus.subscribe("teams-approvals", channel.on_event, channel.handles)
    journal = TeamsJournal(runtime, front.tenants, outbox)
    front.work.replies = journal.reply
    runtime.bus.subscribe("teams-journal", journal.on_event, journal.handles)
    jobs = INSTALLED.get(id(runtime))
    if jobs is not None:  # staff reminders: the scheduler decides, as for mail
        jobs.scheduler.add_channel(TeamsReminders(runtime, front.tenants, outbox, installer))
    actions = CardActions(runtime, front.tenants, front.identity, outbox)
    front.invokes.add(ACTION_INVOKE, actions)
    nudges = TeamsNudges(runtime, front.tenants, outbox, away=away)
    _INSTALLED[id(runtime)] = TeamsCards(outbox, worker, channel, actions, nudges, away,
                                         installer)

    async def start(_runtime: Runtime) -> None:
        worker.start()
        nudges.start()

    async def stop(_runtime: Runtime) -> None:
        await nudges.stop()
        await away.stop()
        await installer.stop()
        await worker.stop()
        _INSTALLED.pop(id(runtime), None)

    runtime.on_start.append(start)
    runtime.on_stop.append(stop)
