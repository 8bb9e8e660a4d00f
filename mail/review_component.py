"""Review requests, reminders and digests by e-mail, the one-click links, GET /outbox, the
scheduler and (against a hosted service) the approval-state poller: installed into the app.

Always: the bus subscribers (review requests, reminders), the link routes (/a, /r, /s,
/prefs). Without a relay: GET /outbox. With `runtime.auto_subscribe` (a real server; tests
that drive the parts themselves turn it off): the scheduler loop, the reconciler (review
requests the webhooks did not bring, embedded or hosted service alike), and against a hosted
service the approval-state poller for organisations no webhook serves.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.routing import BaseRoute

from mail.owner_notices import OwnerNotices
from mail.parts import MailParts
from mail.reminders import Reminders
from mail.reviews import MailContext, ReviewRequests
from mail.templating import Templates
from timebot.approval_poller import ApprovalPoller
from timebot.links import Links
from timebot.outbox_page import OutboxPage
from timebot.reconcile import Reconciler
from timebot.runtime import Runtime
from timebot.scheduler import Scheduler


@dataclass
class ReviewComponent:
    ctx: MailContext
    reviews: ReviewRequests
    reminders: Reminders
    links: Links
    scheduler: Scheduler
    poller: ApprovalPoller
    reconciler: Reconciler


COMPONENTS: dict[int, ReviewComponent] = {}


def component_of(runtime: Runtime) -> ReviewComponent:
    """The installed component of a runtime (tests drive its scheduler and poller)."""
    return COMPONENTS[id(runtime)]


def install_reviews(
    runtime: Runtime, mail: MailParts, routes: list[BaseRoute]
) -> ReviewComponent:
    ctx = MailContext(runtime, Templates(runtime.settings.data_dir), mail)
    component = ReviewComponent(
        ctx, ReviewRequests(ctx), Reminders(ctx), Links(ctx), Scheduler(ctx), ApprovalPoller(ctx),
        Reconciler(ctx),
    )
    COMPONENTS[id(runtime)] = component
    runtime.bus.subscribe("mail-reviews", component.reviews)
    runtime.bus.subscribe("mail-reminders", component.reminders)
    runtime.bus.subscribe("mail-owner-notices", OwnerNotices(ctx))
    routes.extend(component.links.routes())
    if not runtime.settings.smtp_relay:
        routes.extend(OutboxPage(ctx).routes())

    async def start(rt: Runtime) -> None:
        if not rt.auto_subscribe:
            return
        # One process at a time runs these (timebot/state/singleton.py); the scheduler's
        # own tick lease is then that one.
        component.scheduler.gated = True
        rt.singletons.add("scheduler", component.scheduler.start, component.scheduler.stop)
        rt.subscriptions.on_subscribed.append(component.reconciler.request)
        rt.singletons.add("reconciler", component.reconciler.start, component.reconciler.stop)
        if not rt.settings.embedded:
            rt.singletons.add("approval-poller", component.poller.start, component.poller.stop)

    async def stop(rt: Runtime) -> None:
        await component.scheduler.stop()
        await component.poller.stop()
        await component.reconciler.stop()
        COMPONENTS.pop(id(rt), None)

    runtime.on_start.append(start)
    runtime.on_stop.append(stop)
    return component
