"""What every resolver gets as `info.context`: the unit of work and who is asking."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.clock import Clock
from service.models import Organisation, Person, PersonManager
from service.people.models import ROLE_ADMIN, ROLE_MANAGER

if TYPE_CHECKING:
    from service.signin.sessions import SignedIn
    from service.signin.web import SigninConfig, WebExchange


@dataclass
class RequestContext:
    session: AsyncSession
    organisation: Organisation
    person: Person
    clock: Clock
    now_ms: int
    # Set by a mutation resolver that changed nothing (e.g. delete with check: true).
    skip_audit: bool = False
    # Set by a mutation whose arguments hold a secret (revokeApiKey): what its audit row keeps
    # instead of them.
    audit_arguments: dict[str, Any] | None = None
    # False when the request's only field is a mutation: it runs in the request's transaction
    # without a SAVEPOINT, and `mutation_failed` then asks for a rollback instead of a commit.
    mutation_savepoint: bool = True
    mutation_failed: bool = False
    # Objects a resolver read ahead for the fields below it (the session holds loaded objects
    # only weakly: kept here, they are still found by `session.get` when those fields run).
    loaded_ahead: list[Any] = field(default_factory=list)
    # The submissions (service.timesheets.locks.Submission) this request approved or
    # rejected, by their event's id, as read under their lock and saved: a later field of the
    # request on the same event (the approver's Journal message) reads them from here. An
    # event's timesheet, owner and stages do not change once it is submitted.
    decided: dict[str, Any] = field(default_factory=dict)
    # Things to do after the request's transaction commits (webhook deliveries, ...).
    after_commit: list[Any] = field(default_factory=list)
    # The browser's side of the request (cookies, client address) when it came over HTTP;
    # the browser session that authenticated it, if any; `anonymous` for the sign-in
    # mutations that run without credentials (organisation and person are then set by
    # `signin` itself before anything below it resolves).
    web: WebExchange | None = None
    # The process's sign-in configuration (public URL for links in mail), with or without web.
    signin_config: SigninConfig | None = None
    signed_in: SignedIn | None = None
    anonymous: bool = False
    # The request came with an integration key (createApiKey): it may not make or revoke keys.
    integration_key: bool = False
    # Writes that must stay even though the mutation failed (a wrong sign-in code is
    # counted): run after the rollback, then committed.
    failure_writes: list[Callable[[AsyncSession], Awaitable[None]]] = field(
        default_factory=list
    )
    # Writes a query makes (a report run keeps its rows): run after its read, in a write
    # session of their own, then committed (a query's own session may be read-only).
    query_writes: list[Callable[[AsyncSession], Awaitable[None]]] = field(
        default_factory=list
    )
    _managed_ids: set[str] | None = None

    async def run_query_writes(self, sessions: Callable[[], Any]) -> None:
        """The writes a query asked for, in a write session of their own, committed."""
        if self.query_writes:
            async with sessions() as writer:
                for write in self.query_writes:
                    await write(writer)
                await writer.commit()

    @property
    def org_id(self) -> str:
        return self.organisation.id

    @property
    def is_admin(self) -> bool:
        return self.person.role.kind == ROLE_ADMIN

    @property
    def is_manager(self) -> bool:
        return self.person.role.kind == ROLE_MANAGER

    async def managed_person_ids(self) -> set[str]:
        """Ids of the people the caller manages (makeManagerOfPerson)."""
        if self._managed_ids is None:
            rows = await self.session.scalars(
                select(PersonManager.person_id).where(
                    PersonManager.organisation_id == self.org_id,
                    PersonManager.manager_id == self.person.id,
                )
            )
            self._managed_ids = set(rows)
        return self._managed_ids

    async def can_access_person_data(self, person_id: str | None) -> bool:
        """An employee sees only their own records, a manager also their people's, an admin all."""
        if self.is_admin or person_id == self.person.id:
            return True
        if person_id is None:
            return False
        return person_id in await self.managed_person_ids()

    async def visible_person_ids(self) -> set[str] | None:
        """None means every person (admin); otherwise the caller and the people they manage."""
        if self.is_admin:
            return None
        return {self.person.id} | await self.managed_person_ids()
