"""A Slack status that says its person is away (":palm_tree: Vacationing", "Out of office"),
noted as a fact like an out-of-office auto-reply (issue 28): `user_change` events (and
`users.profile.get` when an event carries no status) record the absence, until the status's
expiration (timebot.notify.away_facts.slack_status_away, pure); a status that no longer says
so clears it (bot.chat.away records it). Nothing is answered, nothing decided: the record only
lets someone who may decide be asked (timebot.notify.escalation_tick).

The person is the one the profile's e-mail names in the organisation the workspace serves; a
user of another workspace, a bot, or an address the service does not know records nothing."""

from __future__ import annotations

from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from bot.chat.away import note_away
from bot.slack.deps import SlackDeps
from timebot.errors import DirectoryError, TimebotError
from timebot.notify.away_facts import SLACK_STATUS, slack_status_away
from timebot.notify.periods import local_date

log = structlog.get_logger("timebot.slack.away_status")

_STATUS_FIELDS = ("status_text", "status_emoji")


class AwayStatusPart:
    def __init__(self, deps: SlackDeps) -> None:
        self.deps = deps

    async def on_user_change(self, event: dict[str, Any]) -> None:
        user = event.get("user") or {}
        if not isinstance(user, dict) or user.get("is_bot") or not user.get("id"):
            return
        try:
            await self.note(str(user["id"]), dict(user.get("profile") or {}),
                            str(user.get("tz") or "") or None)
        except (TimebotError, SlackApiError):
            log.exception("slack_status_unread", user=user.get("id"))

    async def note(self, user_id: str, profile: dict[str, Any],
                   time_zone: str | None = None) -> str:
        """Record or clear the user's absence from their profile; what became of it. The
        status's expiry is dated in the user's own time zone (Slack's `tz` of the user)."""
        runtime = self.deps.runtime
        if not any(name in profile for name in _STATUS_FIELDS):
            answer = await self.deps.web.users_profile_get(user=user_id)
            profile = {**dict(answer.get("profile") or {}), **profile}
        email = str(profile.get("email") or "").strip()
        org_id = await self.deps.workspace.organisation_id()
        if not email or org_id is None or not await self.deps.workspace.serves(org_id):
            return "nobody: no address or no organisation"
        try:
            entry = await runtime.directory.find_by_email(email, org_id)
        except DirectoryError:
            return "nobody: unknown address"
        now_ms = runtime.clock.now_ms()
        today = local_date(now_ms, time_zone)
        expiration = profile.get("status_expiration")
        text, emoji = str(profile.get("status_text") or ""), str(profile.get("status_emoji") or "")
        away, until = slack_status_away(
            text, emoji, int(expiration) if isinstance(expiration, int) else None, today,
            time_zone)
        return await note_away(runtime, organisation_id=org_id, person_id=entry.person_id,
                               away=away, until=until, seen_ms=now_ms, source=SLACK_STATUS,
                               message_key=f"slack:{user_id}:{emoji}:{text}:{expiration}")


def register(app: AsyncApp, deps: SlackDeps) -> AwayStatusPart:
    part = AwayStatusPart(deps)
    app.event("user_change")(part.on_user_change)
    return part
