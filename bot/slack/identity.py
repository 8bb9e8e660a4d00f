"""Who is who: a Slack user is a person of the service, matched by e-mail.

The Slack profile (users.info, scope users:read.email) gives the e-mail and the time zone; the
people directory gives the person and their OWN API key (linked once through the Slack modal or
`timebot people link`, or provisioned by the embedded service). Every call the bot makes for a
Slack user uses that key: never an administrator's on their behalf.

Only people of the organisation the workspace serves (bot.slack.workspace) are Slack users here: a
person of another organisation is never looked up in the workspace nor linked through it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy import update

from bot.chat.person import ChatPerson, NotIdentified, no_email, not_known
from bot.slack.workspace import Workspace
from timebot.directory import PeopleDirectory
from timebot.errors import DirectoryError, NotLinked, UnknownPerson
from timebot.state.db import unit_of_work
from timebot.state.models import PersonLink

PROFILE_TTL_SECONDS = 600.0
PERSON_TTL_SECONDS = 60.0  # a re-linked or revoked key is seen within a minute


@dataclass(frozen=True)
class SlackPerson(ChatPerson):
    """A Slack user resolved to a person of the service, with the key to act as them."""

    slack_user_id: str
    tz_offset_seconds: int


@dataclass(frozen=True)
class SlackProfile:
    user_id: str
    email: str | None
    tz: str
    tz_offset_seconds: int
    is_bot: bool


class Identity:
    """Resolves Slack user ids to people (profiles cached for a few minutes)."""

    def __init__(
        self,
        client: AsyncWebClient,
        directory: PeopleDirectory,
        workspace: Workspace,
    ) -> None:
        self.client = client
        self.directory = directory
        self.workspace = workspace
        self._profiles: dict[str, tuple[float, SlackProfile]] = {}
        self._by_person: dict[str, str] = {}
        self._people: dict[str, tuple[float, SlackPerson]] = {}

    async def organisation_id(self) -> str:
        """The organisation the workspace serves (TIMEBOT_SLACK_ORGANISATION, or the only one
        served, recorded)."""
        org_id = await self.workspace.organisation_id()
        if org_id is None:
            raise NotIdentified(
                "This workspace is not tied to one organisation yet: the administrator sets "
                "TIMEBOT_SLACK_ORGANISATION.",
                can_link=False,
            )
        return org_id

    async def profile(self, user_id: str) -> SlackProfile:
        cached = self._profiles.get(user_id)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        answer = await self.client.users_info(user=user_id)
        user: dict[str, Any] = dict(answer.get("user") or {})
        profile = SlackProfile(
            user_id,
            (user.get("profile") or {}).get("email"),
            str(user.get("tz") or "UTC"),
            int(user.get("tz_offset") or 0),
            bool(user.get("is_bot")),
        )
        self._profiles[user_id] = (time.monotonic() + PROFILE_TTL_SECONDS, profile)
        return profile

    def forget(self, user_id: str) -> None:
        """Drop what is cached about a user (e.g. their key was refused)."""
        self._people.pop(user_id, None)
        self._profiles.pop(user_id, None)

    async def resolve(self, user_id: str) -> SlackPerson:
        """The person behind a Slack user (cached a minute); raises NotIdentified with what
        to do."""
        cached = self._people.get(user_id)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        try:
            profile = await self.profile(user_id)
        except SlackApiError as error:
            raise NotIdentified(
                f"I could not read your Slack profile ({error.response.get('error')}).",
                can_link=False,
            ) from error
        if not profile.email:
            raise no_email("Slack")
        org_id = await self.organisation_id()
        try:
            entry = await self.directory.find_by_email(profile.email, org_id)
            apikey = await self.directory.apikey_for(entry.organisation_id, entry.person_id)
        except (UnknownPerson, NotLinked) as error:
            raise not_known(profile.email, "run `/timesheet link`") from error
        except DirectoryError as error:
            raise NotIdentified(str(error), can_link=False) from error
        if entry.slack_user_id != user_id:
            await self._remember_slack_user(entry.organisation_id, entry.person_id, user_id)
        self._by_person[entry.person_id] = user_id
        person = SlackPerson(
            organisation_id=entry.organisation_id, person_id=entry.person_id, name=entry.name,
            email=entry.email, apikey=apikey, tz=profile.tz, slack_user_id=user_id,
            tz_offset_seconds=profile.tz_offset_seconds,
        )
        self._people[user_id] = (time.monotonic() + PERSON_TTL_SECONDS, person)
        return person

    async def link(self, user_id: str, apikey: str) -> SlackPerson:
        """Link the user's own key (checked with currentPerson against their Slack e-mail)."""
        profile = await self.profile(user_id)
        if not profile.email:
            raise NotIdentified("Your Slack profile shows no e-mail address.", can_link=False)
        await self.directory.link(profile.email, apikey.strip(),
                                  organisation_id=await self.organisation_id())
        self._people.pop(user_id, None)
        return await self.resolve(user_id)

    async def _remember_slack_user(self, org_id: str, person_id: str, user_id: str) -> None:
        async with unit_of_work(self.directory.sessions) as session:
            await session.execute(
                update(PersonLink)
                .where(PersonLink.organisation_id == org_id, PersonLink.person_id == person_id)
                .values(slack_user_id=user_id)
            )

    async def slack_user_for(self, person_id: str, email: str | None = None) -> str | None:
        """The Slack user of a person of the service: remembered, or found by e-mail
        (users.lookupByEmail); None when they are not in the workspace, or of an organisation
        it does not serve, or the app is uninstalled."""
        if not await self.workspace.active():
            return None
        known = self._by_person.get(person_id)
        if known is not None:
            return known
        try:
            entry = await self.directory.find_by_person_id(person_id)
        except DirectoryError:
            return None
        if not await self.workspace.serves(entry.organisation_id):
            return None
        if entry.slack_user_id:
            self._by_person[person_id] = entry.slack_user_id
            return entry.slack_user_id
        address = email or entry.email
        if not address:
            return None
        try:
            answer = await self.client.users_lookupByEmail(email=address)
        except SlackApiError:
            return None
        user_id = str((answer.get("user") or {}).get("id") or "") or None
        if user_id is not None:
            await self._remember_slack_user(entry.organisation_id, person_id, user_id)
            self._by_person[person_id] = user_id
        return user_id

    async def discover(self) -> list[SlackProfile]:
        """Every human of the workspace who is a person of the organisation (users.list),
        remembered with their Slack id: whom staff nudges may reach."""
        org_id = await self.organisation_id()
        found: list[SlackProfile] = []
        cursor: str | None = None
        while True:
            page = await self.client.users_list(limit=200, cursor=cursor)
            for user in page.get("members") or []:
                if user.get("is_bot") or user.get("deleted") or user.get("id") == "USLACKBOT":
                    continue
                email = (user.get("profile") or {}).get("email")
                if not email:
                    continue
                profile = SlackProfile(str(user["id"]), email, str(user.get("tz") or "UTC"),
                                       int(user.get("tz_offset") or 0), False)
                self._profiles[profile.user_id] = (
                    time.monotonic() + PROFILE_TTL_SECONDS, profile)
                try:
                    entry = await self.directory.find_by_email(email, org_id)
                except DirectoryError:
                    continue
                if entry.slack_user_id != profile.user_id:
                    await self._remember_slack_user(entry.organisation_id, entry.person_id,
                                                    profile.user_id)
                self._by_person[entry.person_id] = profile.user_id
                found.append(profile)
            cursor = ((page.get("response_metadata") or {}).get("next_cursor")) or None
            if not cursor:
                return found
