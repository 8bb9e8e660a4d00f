"""The ground's notification jobs, installed by the shell: the review dispatch (a bus
subscriber that decides review requests once and hands them to the channels the fronts
register with it), the scheduler (which sends through the channels the fronts register with
it), the reconciler (review requests the webhooks did
not bring, embedded or hosted service alike) and, against a hosted service, the approval-state
poller for organisations no webhook serves. The last two feed the bus, for every channel.

They run with `runtime.auto_subscribe` (a real server; tests that drive them themselves turn
it off), in one process at a time (timebot/state/singleton.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from timebot.notify.approval_poller import ApprovalPoller
from timebot.notify.escalation_tick import Escalator
from timebot.notify.reconcile import Reconciler
from timebot.notify.review_dispatch import ReviewDispatch
from timebot.notify.scheduler import Scheduler
from timebot.process.runtime import Runtime


@dataclass
class NotificationJobs:
    reviews: ReviewDispatch
    scheduler: Scheduler
    poller: ApprovalPoller
    reconciler: Reconciler
    escalator: Escalator


INSTALLED: dict[int, NotificationJobs] = {}


def jobs_of(runtime: Runtime) -> NotificationJobs:
    """The installed jobs of a runtime (tests drive its review dispatch, scheduler, poller and
    reconciler)."""
    return INSTALLED[id(runtime)]


def install_notifications(runtime: Runtime) -> NotificationJobs:
    reviews = ReviewDispatch(runtime)
    jobs = NotificationJobs(reviews, Scheduler(runtime), ApprovalPoller(runtime),
                            Reconciler(runtime), Escalator(runtime, reviews))
    jobs.scheduler.passes.append(jobs.escalator.tick)
    INSTALLED[id(runtime)] = jobs
    runtime.bus.subscribe("review-requests", jobs.reviews, jobs.reviews.handles)

    async def start(rt: Runtime) -> None:
        if not rt.auto_subscribe:
            return
        # The singleton lease makes the scheduler the only one: its own tick lease is then
        # that one.
        jobs.scheduler.gated = True
        rt.singletons.add("scheduler", jobs.scheduler.start, jobs.scheduler.stop)
        rt.subscriptions.on_subscribed.append(jobs.reconciler.request)
        rt.singletons.add("reconciler", jobs.reconciler.start, jobs.reconciler.stop)
        if not rt.settings.embedded:
            rt.singletons.add("approval-poller", jobs.poller.start, jobs.poller.stop)

    async def stop(rt: Runtime) -> None:
        await jobs.scheduler.stop()
        await jobs.poller.stop()
        await jobs.reconciler.stop()
        INSTALLED.pop(id(rt), None)

    runtime.on_start.append(start)
    runtime.on_stop.append(stop)
    return jobs
