"""Where the optional parts of the process install themselves: each adds its routes and its
start/stop hooks to the runtime when it is configured (mail inbound, the notification jobs,
review requests and reminders by mail, the one-click link pages, Slack). One line per part."""

from __future__ import annotations

from starlette.routing import BaseRoute

from mail.inbound_component import install_inbound
from mail.queues.parts import MailParts
from mail.review_component import install_reviews
from service.embedded import EmbeddedService
from shell.account_upkeep import install_account_upkeep
from shell.pages import install_pages
from timebot.process.notifications import install_notifications
from timebot.process.runtime import Runtime
from web.links_component import install_links


def install_components(
    runtime: Runtime, service: EmbeddedService | None, mail: MailParts,
    routes: list[BaseRoute],
) -> None:
    """Called once by create_app, before the app starts. A service-only process
    (TIMEBOT_ROLE=service) runs the embedded service's upkeep and none of the fronts."""
    install_account_upkeep(runtime, service, mail.outbox)
    who_is = install_pages(runtime, service, routes)
    if not runtime.settings.runs_fronts:
        return
    install_inbound(runtime, mail, routes)
    notifications = install_notifications(runtime)
    install_reviews(runtime, mail, routes, notifications)
    install_links(runtime, routes)
    settings = runtime.settings
    # Imported only where configured: each chat front and its SDK are a second of start-up.
    if settings.slack_configured:
        from bot.slack.component import install_slack

        install_slack(runtime, routes, notifications.reviews, who_is)
    if settings.teams_app_id:
        from bot.teams.cards_component import install_teams_cards
        from bot.teams.component import install_teams

        install_teams(runtime, routes, who_is)
        install_teams_cards(runtime, notifications.reviews)
