"""Review requests, reminders, owner notices and digests by e-mail, and GET /outbox: installed
into the app.

Always: mail's channel of the ground's review dispatch (review requests), the bus subscribers
(reminders, owner notices) and mail's channel of the ground's scheduler (end-of-period
reminders, daily digests). Without a relay: GET /outbox.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.routing import BaseRoute

from mail.outbound.channel import MailChannel
from mail.outbound.climb_mail import ClimbMails
from mail.outbound.outbox_page import OutboxPage
from mail.outbound.owner_notices import OwnerNotices
from mail.outbound.reminders import Reminders
from mail.outbound.reviews import MailContext
from mail.outbound.templating import MailTemplates
from mail.queues.parts import MailParts
from timebot.process.notifications import NotificationJobs
from timebot.process.runtime import Runtime


@dataclass
class ReviewComponent:
    ctx: MailContext
    reminders: Reminders
    channel: MailChannel


COMPONENTS: dict[int, ReviewComponent] = {}


def component_of(runtime: Runtime) -> ReviewComponent:
    """The installed component of a runtime (tests reach mail's queues and subscribers)."""
    return COMPONENTS[id(runtime)]


def install_reviews(
    runtime: Runtime, mail: MailParts, routes: list[BaseRoute], notifications: NotificationJobs
) -> ReviewComponent:
    ctx = MailContext(runtime, MailTemplates(runtime.settings.data_dir), mail)
    component = ReviewComponent(ctx, Reminders(ctx), MailChannel(ctx))
    COMPONENTS[id(runtime)] = component
    notifications.reviews.add_channel(component.channel)
    notifications.reviews.add_climb_channel(ClimbMails(ctx))  # issue 28's climbing reminders
    runtime.bus.subscribe("mail-reminders", component.reminders, component.reminders.handles)
    owner_notices = OwnerNotices(ctx)
    runtime.bus.subscribe("mail-owner-notices", owner_notices, owner_notices.handles)
    notifications.scheduler.add_channel(component.channel)
    notifications.scheduler.add_report_channel(component.channel)
    if not runtime.settings.smtp_relay:
        routes.extend(OutboxPage(ctx).routes())

    async def stop(rt: Runtime) -> None:
        COMPONENTS.pop(id(rt), None)

    runtime.on_stop.append(stop)
    return component
