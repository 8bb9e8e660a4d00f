"""Who wrote: a Teams user is a person of the organisation their tenant serves, matched by their
Entra ID object id (recorded once matched), else by the e-mail the Bot Connector's member
lookup gives for that object id (TeamsInfo's get_member: Microsoft's, verified, never a
display name) through the people directory. Every call for them uses their own key."""

from __future__ import annotations

import time
from dataclasses import dataclass

from bot.chat.person import ChatPerson
from bot.teams.connector import Connector, ConnectorError
from bot.teams.tenants import LinkedUser, TeamsTenants, Tenant
from timebot.directory.people import PeopleDirectory
from timebot.errors import DirectoryError, NotLinked, UnknownPerson
from timebot.l10n import _

PERSON_TTL_SECONDS = 60.0  # a re-linked or revoked key is seen within a minute (as Slack)


@dataclass(frozen=True)
class TeamsPerson(ChatPerson):
    """A Teams user resolved to a person (bot.chat's ChatPerson) and where they are."""

    tenant_id: str = ""
    aad_object_id: str = ""


class NotIdentified(Exception):
    """The user cannot act yet; `message` tells them what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Sender:
    """Who an activity names (from a verified activity)."""

    tenant_id: str
    aad_object_id: str
    teams_user_id: str
    conversation_id: str
    service_url: str
    time_zone: str | None


class TeamsIdentity:
    def __init__(self, tenants: TeamsTenants, directory: PeopleDirectory,
                 connector: Connector, public_url: str) -> None:
        self.tenants, self.directory = tenants, directory
        self.connector, self.public_url = connector, public_url
        self._people: dict[tuple[str, str], tuple[float, TeamsPerson, Sender]] = {}

    async def resolve(self, tenant: Tenant, sender: Sender) -> TeamsPerson:
        """The person behind the sender (cached a minute); NotIdentified says what to do."""
        key = (tenant.tenant_id, sender.aad_object_id)
        cached = self._people.get(key)
        if cached is not None and cached[0] > time.monotonic() and cached[2] == sender \
                and cached[1].organisation_id == tenant.organisation_id:
            return cached[1]
        person = await self._resolve(tenant, sender)
        self._people[key] = (time.monotonic() + PERSON_TTL_SECONDS, person, sender)
        return person

    def forget(self, tenant_id: str, aad_object_id: str) -> None:
        self._people.pop((tenant_id, aad_object_id), None)

    async def _resolve(self, tenant: Tenant, sender: Sender) -> TeamsPerson:
        if not sender.aad_object_id:
            raise NotIdentified(_("I cannot tell who you are: Teams did not name your "
                                  "Microsoft 365 account."))
        linked = await self.tenants.user(tenant.tenant_id, sender.aad_object_id)
        if linked is not None and linked.organisation_id == tenant.organisation_id:
            person_id = linked.person_id
            if (linked.conversation_id != sender.conversation_id
                    or linked.service_url != sender.service_url):
                await self._record(tenant, sender, person_id)
        else:
            person_id = await self._match(tenant, sender)
        try:
            entry = await self.directory.find_by_person_id(person_id)
            apikey = await self.directory.apikey_for(tenant.organisation_id, person_id)
        except (UnknownPerson, NotLinked) as error:
            raise NotIdentified(self._how_to_link(None)) from error
        except DirectoryError as error:
            raise NotIdentified(str(error)) from error
        return TeamsPerson(tenant.organisation_id, person_id, entry.name, entry.email, apikey,
                           sender.time_zone or "UTC", tenant.tenant_id, sender.aad_object_id)

    async def _match(self, tenant: Tenant, sender: Sender) -> str:
        try:
            member = await self.connector.member(sender.service_url, sender.conversation_id,
                                                 sender.teams_user_id)
        except ConnectorError as error:
            raise NotIdentified(_("I could not read your Teams profile; try again in a "
                                  "moment.")) from error
        if (member.aad_object_id != sender.aad_object_id
                or (member.tenant_id and member.tenant_id != tenant.tenant_id)):
            raise NotIdentified(self._how_to_link(None))
        email = (member.email or "").strip()
        if not email:
            raise NotIdentified(self._how_to_link(None))
        try:
            entry = await self.directory.find_by_email(email, tenant.organisation_id)
        except DirectoryError as error:
            raise NotIdentified(self._how_to_link(email)) from error
        if entry.organisation_id != tenant.organisation_id:
            raise NotIdentified(self._how_to_link(email))
        await self._record(tenant, sender, entry.person_id)
        return entry.person_id

    async def _record(self, tenant: Tenant, sender: Sender, person_id: str) -> None:
        await self.tenants.link(LinkedUser(
            tenant.tenant_id, sender.aad_object_id, tenant.organisation_id, person_id,
            sender.teams_user_id, sender.conversation_id, sender.service_url))

    def _how_to_link(self, email: str | None) -> str:
        known = (_("I don't know {email} in the time tracking service yet.").format(email=email)
                 if email else _("I don't know your Microsoft 365 account in the time "
                                 "tracking service yet."))
        return known + " " + _(
            "Ask an administrator of your organisation to add you with the e-mail address of "
            "your Microsoft 365 account (or to change yours to it at {url}/account), then "
            "write to me again.").format(url=self.public_url)
