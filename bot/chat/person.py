"""A person in chat: who wrote or clicked, resolved to a person of the service with their OWN
API key (never an administrator's on their behalf), and what an unknown user is told.

An adapter resolves its platform's user (a Slack user by their profile's e-mail, a Teams user
by their AAD object / UPN) to a `ChatPerson` (its subclass may add the platform's ids:
bot.slack.identity.SlackPerson), or raises `NotIdentified` with what to do: `not_known` is the
answer for a user the directory does not know yet, `how` naming the platform's way to link
(Slack: "run `/timesheet link`").

`who_of(person)` is the quick-entry caller (timebot.timeentry.Who: organisation, person, key,
time zone); `speaking(runtime, person)` their language and formats, read with their key, to put
in force (`with l10n.using(…)`) around what is written to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from timebot import l10n
from timebot.l10n.loading import load_localisation
from timebot.timeentry import Who

if TYPE_CHECKING:
    from timebot.runtime import Runtime


@dataclass(frozen=True)
class ChatPerson:
    """A chat user resolved to a person of the service, with the key to act as them and the
    time zone their chat client reports."""

    organisation_id: str
    person_id: str
    name: str
    email: str
    apikey: str
    tz: str


class NotIdentified(Exception):
    """The chat user cannot act yet; `message` tells them how to link (shown only to them);
    `can_link`: linking their own key would help (the adapter offers its way to)."""

    def __init__(self, message: str, *, can_link: bool) -> None:
        super().__init__(message)
        self.message = message
        self.can_link = can_link


def not_known(email: str, how: str) -> NotIdentified:
    """A user whose e-mail the service does not know (or who linked no key yet)."""
    return NotIdentified(
        f"I don't know {email} in the time tracking service yet. Link your account once with "
        f"your own API key: {how} (the key is in your profile in the time tracking service).",
        can_link=True,
    )


def no_email(platform: str) -> NotIdentified:
    """A user whose chat profile shows no e-mail address."""
    return NotIdentified(
        f"Your {platform} profile shows no e-mail address, so I cannot tell who you are in "
        f"the time tracking service. Ask your {platform} admin to let the app read e-mails.",
        can_link=False,
    )


def zone_of(person: ChatPerson) -> ZoneInfo:
    """The person's time zone (UTC when their chat client reports none or an unknown one)."""
    try:
        return ZoneInfo(person.tz or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def who_of(person: ChatPerson) -> Who:
    """The person as quick entry's caller, in their chat time zone."""
    return Who(person.organisation_id, person.person_id, person.apikey, zone_of(person))


async def speaking(runtime: Runtime, person: ChatPerson) -> l10n.Localisation:
    """The person's language and formats (read with their own key; English when unread)."""
    return await load_localisation(runtime.client, person.apikey, person.person_id)
