"""Approvers who never wrote to the bot reached anyway (#42): when a card or a reminder is for a
person of an organisation whose tenant is connected but who has no Teams user yet, the bot's
app is installed for them through Microsoft Graph (proactive installation, application
permission TeamsAppInstallation.ReadWriteForUser.All, with AppCatalog.Read.All to find the
app in the tenant's catalog by its manifest id and User.ReadBasic.All to find the user), and
the personal chat it opens is where their cards go:

1. the user in the tenant serving the organisation (its own token: never another tenant's),
   by the person's e-mail (`GET /users/{mail}`: Microsoft's account, never a display name),
   the answer's mail or principal name being that e-mail;
2. `POST /users/{id}/teamwork/installedApps` binding the catalog app (a 409: installed
   already, by a concurrent fan-out or another process, is as good);
3. the installation (`GET …/installedApps?$filter=teamsApp/externalId eq '{app id}'`) and its
   chat (`GET …/installedApps/{installation}/chat`): the personal conversation;
4. the member there as the Bot Connector tells it (the Teams user id the card refreshes for),
   its object id, tenant and e-mail checked again; then recorded as a linked Teams user
   (bot.teams.tenants), so it happens once.

A fan-out never waits for it: the card's channel asks for it (`later`) and goes on (the review
mail goes meanwhile), the card is queued once the person is reached, at most `concurrency`
installations at once. A tenant refusing (403: the permission not granted), throttling or
timing out is quiet meanwhile (bot.teams.graph_gate: one refused call per tenant per
`quiet_seconds`, one log line), and the person is not reached in Teams — their review mail
goes as before. A person not found, or failing otherwise, is not tried again before
`retry_seconds`. A person whose Teams user removed the bot is never installed for again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import structlog

from bot.teams.connector import Connector, ConnectorError
from bot.teams.graph import GraphClient, GraphError
from bot.teams.graph_gate import THROTTLED_SECONDS, GraphGate
from bot.teams.tenants import LinkedUser, TeamsTenants, Tenant
from plumbing.tasks import BackgroundTasks
from timebot.directory.people import PeopleDirectory
from timebot.errors import DirectoryError, UnknownPerson

log = structlog.get_logger("timebot.teams.installs")

QUIET_SECONDS = 600.0
RETRY_SECONDS = 600.0
CONCURRENCY = 4
INSTALL = "installedApps"  # the gate's endpoint: every call of an installation


class NotReached(Exception):
    """The person cannot be reached in Teams now (`why`, for the log)."""


class TeamsInstaller:
    def __init__(self, tenants: TeamsTenants, directory: PeopleDirectory, graph: GraphClient,
                 connector: Connector, app_id: str, *, quiet_seconds: float = QUIET_SECONDS,
                 retry_seconds: float = RETRY_SECONDS, concurrency: int = CONCURRENCY) -> None:
        self.tenants, self.directory, self.graph = tenants, directory, graph
        self.connector, self.app_id, self.retry_seconds = connector, app_id, retry_seconds
        # Graph timing out quiets the tenant a moment too: 1,000 people are not 1,000 timeouts
        self.gate = GraphGate(quiet_seconds, unreachable_seconds=THROTTLED_SECONDS)
        self._catalog: dict[str, str] = {}  # tenant -> the app's catalog id there
        self._not_before: dict[tuple[str, str], float] = {}  # (organisation, person)
        self._people: dict[tuple[str, str], asyncio.Lock] = {}
        self._slots = asyncio.Semaphore(concurrency)
        self._tasks = BackgroundTasks()

    def later(self, organisation_id: str, person_id: str,
              then: Callable[[], Awaitable[object]]) -> None:
        """Reach the person in the background (at most `concurrency` installations at once)
        and run `then` once they are: a fan-out never waits for Graph."""
        self._tasks.start(self._later(organisation_id, person_id, then), "teams-install")

    async def _later(self, organisation_id: str, person_id: str,
                     then: Callable[[], Awaitable[object]]) -> None:
        try:
            async with self._slots:
                reached = await self.reach(organisation_id, person_id)
            if reached is not None:
                await then()
        except Exception:  # the database away a moment: the next delivery tries again
            log.exception("teams_install_failed", person=person_id)

    async def settled(self) -> None:
        """Wait for the installations under way (tests; a stop that lets them finish)."""
        await self._tasks.settled()

    async def stop(self) -> None:
        await self._tasks.stop()

    async def reach(self, organisation_id: str, person_id: str) -> LinkedUser | None:
        """The person's Teams user: the linked one, else one the app was installed for now;
        None when they cannot be reached in Teams (no tenant, refused, not found)."""
        user = await self.tenants.user_of_person(organisation_id, person_id)
        if user is not None:
            return user
        key = (organisation_id, person_id)
        now = time.monotonic()
        if self._not_before.get(key, 0.0) > now:
            return None
        tenant = await self.tenants.tenant_of(organisation_id)
        if tenant is None or not tenant.active or not tenant.service_url \
                or self.gate.is_quiet((tenant.tenant_id, INSTALL)):
            return None
        if len(self._not_before) > 10_000:
            self._not_before = {k: until for k, until in self._not_before.items() if until > now}
        if len(self._people) > 10_000:
            self._people = {k: lock for k, lock in self._people.items() if lock.locked()}
        async with self._people.setdefault(key, asyncio.Lock()):
            # concurrent fan-outs of this process install once: the second finds it linked
            user = await self.tenants.user_of_person(organisation_id, person_id)
            if user is not None or await self.tenants.ever_linked(
                    tenant.tenant_id, organisation_id, person_id):
                return user
            return await self._install_logged(tenant, person_id)

    async def _install_logged(self, tenant: Tenant, person_id: str) -> LinkedUser | None:
        key = (tenant.organisation_id, person_id)
        try:
            installed = await self.gate.call((tenant.tenant_id, INSTALL),
                                             lambda: self._install(tenant, person_id))
        except GraphError as error:
            self._not_before[key] = time.monotonic() + self.retry_seconds
            log.info("teams_install_refused" if error.status == 403 else "teams_install_failed",
                     tenant=tenant.tenant_id, person=person_id, status=error.status,
                     error=str(error)[:120])
            return None
        except NotReached as error:
            self._not_before[key] = time.monotonic() + self.retry_seconds
            log.info("teams_install_not_reached", tenant=tenant.tenant_id, person=person_id,
                     why=str(error))
            return None
        if installed is not None:
            await self.tenants.link(installed)
            log.info("teams_installed_for_user", tenant=tenant.tenant_id, person=person_id)
        return installed

    async def _install(self, tenant: Tenant, person_id: str) -> LinkedUser:
        assert tenant.service_url is not None
        tid = tenant.tenant_id
        try:
            entry = await self.directory.find_by_person_id(person_id)
        except (UnknownPerson, DirectoryError) as error:
            raise NotReached("no such person") from error
        email = entry.email.strip().lower()
        if entry.organisation_id != tenant.organisation_id or not email:
            raise NotReached("not a person of the tenant's organisation")
        _status, found = await self._user(tid, email)
        said = {str(found.get(name) or "").lower() for name in ("mail", "userPrincipalName")}
        aad_object_id = str(found.get("id") or "")
        if email not in said or not aad_object_id:
            raise NotReached("the account does not have the person's e-mail")
        if await self.tenants.user(tid, aad_object_id) is not None:
            raise NotReached("the account is linked to another person")
        users = f"users/{quote(aad_object_id, safe='')}/teamwork/installedApps"
        catalog = await self._catalog_id(tid)
        await self.graph.request("POST", tid, users, body={  # 409: installed already
            "teamsApp@odata.bind": f"{self.graph.endpoints.graph}/appCatalogs/teamsApps/"
                                   f"{catalog}"})
        _status, listed = await self.graph.request("GET", tid, users, params={
            "$expand": "teamsApp", "$filter": f"teamsApp/externalId eq '{self.app_id}'"})
        installations = [item for item in listed.get("value") or []
                         if isinstance(item, dict) and item.get("id")]
        if not installations:
            raise NotReached("no installation after installing")
        installation = quote(str(installations[0]["id"]), safe="")
        _status, chat = await self.graph.request("GET", tid, f"{users}/{installation}/chat")
        conversation_id = str(chat.get("id") or "")
        try:
            member = await self.connector.member(tenant.service_url, conversation_id,
                                                 aad_object_id)
        except ConnectorError as error:
            raise NotReached(f"the chat's member unknown ({error.status})") from error
        if (member.aad_object_id != aad_object_id or not member.id
                or (member.tenant_id and member.tenant_id != tid)
                or (member.email and member.email.strip().lower() != email)):
            raise NotReached("the chat's member is someone else")
        return LinkedUser(tid, aad_object_id, tenant.organisation_id, person_id, member.id,
                          conversation_id, tenant.service_url)

    async def _user(self, tenant_id: str, email: str) -> tuple[int, dict[str, object]]:
        try:
            return await self.graph.request("GET", tenant_id, f"users/{quote(email, safe='@')}")
        except GraphError as error:
            if error.status == 404:
                raise NotReached("no such user in the tenant") from error
            raise

    async def _catalog_id(self, tenant_id: str) -> str:
        known = self._catalog.get(tenant_id)
        if known is not None:
            return known
        _status, found = await self.graph.request(
            "GET", tenant_id, "appCatalogs/teamsApps",
            params={"$filter": f"externalId eq '{self.app_id}'"})
        apps = [item for item in found.get("value") or []
                if isinstance(item, dict) and item.get("id")]
        if not apps:
            raise NotReached("the app is not in the tenant's catalog")
        self._catalog[tenant_id] = str(apps[0]["id"])
        return self._catalog[tenant_id]
