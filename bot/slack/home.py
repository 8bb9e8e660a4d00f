"""The App Home tab: this week's hours by day, the timesheet's status, the time off left
(allowances, as of today) and, for approvers, what waits for them with the same Approve /
Reject buttons as the DMs (the content: bot.chat.home). Read as the person (own key), published
with views.publish when the tab is opened."""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp

from bot.chat.home import HomeContent, home_content, read_home
from bot.chat.person import NotIdentified
from bot.slack.approval_blocks import pending_blocks
from bot.slack.approve_all import approve_all_button
from bot.slack.deps import SlackDeps
from bot.slack.identity import SlackPerson
from bot.slack.linking import link_prompt
from bot.slack.render import SLACK
from timebot import l10n
from timebot.errors import TimebotError

log = structlog.get_logger("timebot.slack.home")


def home_view(content: HomeContent) -> dict[str, Any]:
    """The Home tab's view (in the language in force, as `content`)."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": content.title}},
        {"type": "section", "text": {"type": "mrkdwn", "text": content.hours}},
        {"type": "section", "text": {"type": "mrkdwn", "text": content.status}},
    ]
    if content.time_off is not None:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": content.time_off}})
    if content.waiting_title is not None:
        blocks.append({"type": "divider"})
        blocks.append({"type": "header", "text": {"type": "plain_text",
                                                  "text": content.waiting_title}})
        # Slack takes 100 blocks: two per request, and "Approve all" names exactly those shown
        shown = content.pending[:min(40, (100 - len(blocks) - 1) // 2)]
        blocks.extend(pending_blocks(shown))
        if len(shown) > 1:
            blocks.append(approve_all_button([request for request, _name, _total in shown]))
    return {"type": "home", "blocks": blocks[:100]}


class HomePart:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def on_opened(self, event: dict[str, Any]) -> None:
        if event.get("tab") not in (None, "home"):
            return
        user = str(event.get("user", ""))
        try:
            person = await self.deps.identity.resolve(user)
        except NotIdentified as refusal:  # show how to link, in the tab
            await self.deps.web.views_publish(user_id=user, view={
                "type": "home", "blocks": link_prompt(refusal.message, refusal.can_link)})
            return
        try:
            await self.publish(person)
        except TimebotError as error:
            log.warning("home_failed", user=user, error=str(error))

    async def publish(self, person: SlackPerson) -> None:
        facts = await read_home(self.deps.runtime, person)
        with l10n.using(facts.local):  # every figure and date in the person's formats
            view = home_view(home_content(facts, SLACK))
        await self.deps.web.views_publish(user_id=person.slack_user_id, view=view)


def register(app: AsyncApp, deps: SlackDeps) -> HomePart:
    part = HomePart(deps)
    app.event("app_home_opened")(part.on_opened)
    return part
