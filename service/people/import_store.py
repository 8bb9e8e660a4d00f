"""Reading what `plan` compares with, and writing a plan (`timebot service import`).

The writes go in short transactions (`batch` rows each), so that a server on the same
database waits at most one batch for its write lock. Each writes the records the mutations
write (addPerson's person made by `provisioning.new_person`, addTag's tag, tagPerson /
untagPerson, makeManagerOfPerson / removeManagerOfPerson, editPersonName / editPersonRole)
and their audit-trail rows, in the acting administrator's name. Tags are made first, then
the people, then their managers (every person exists by then). A run stopped half way
leaves whole batches; the next run plans again from what is there and ends in the same
state. No mail is sent: addPerson sends none either (people sign in with their e-mail).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from plumbing.db import unit_of_work
from plumbing.ids import new_id
from service.errors import RuleViolation
from service.models import AuditTrail, Organisation, Person, PersonManager, PersonTag, Role, Tag
from service.organisation import default_tag_category, new_person
from service.people.csv_import import tag_key
from service.people.import_plan import Change, Existing, ExistingPerson, Plan, RoleInfo, TagInfo
from service.people.models import ROLE_ADMIN

_AUDIT = insert(cast(Table, AuditTrail.__table__))
Clock = Callable[[], int]


class ImportRefused(RuleViolation):
    """The organisation cannot take an import (unknown, no active administrator)."""


@dataclass(frozen=True)
class Outcome:
    written: int  # rows written (added or updated)
    skipped: tuple[str, ...]  # e-mail addresses another writer added meanwhile


async def load_existing(session: AsyncSession, org_id: str) -> Existing:
    if await session.get(Organisation, org_id) is None:
        raise ImportRefused(f"no organisation {org_id}")
    roles = [RoleInfo(*row) for row in await session.execute(
        select(Role.id, Role.name, Role.kind, Role.archived).where(Role.organisation_id == org_id)
    )]
    tags: dict[str, TagInfo] = {}
    tag_keys: dict[str, str] = {}
    for tag_id, name, archived in await session.execute(
        select(Tag.id, Tag.name, Tag.archived).where(Tag.organisation_id == org_id)
        .order_by(Tag.archived, Tag.created_ms, Tag.id)
    ):
        tags.setdefault(tag_key(name), TagInfo(tag_id, name, archived))
        tag_keys[tag_id] = tag_key(name)
    people = list(await session.execute(
        select(Person.id, Person.name, Person.email, Person.role_id, Person.archived)
        .where(Person.organisation_id == org_id).order_by(Person.created_ms, Person.id)
    ))
    emails = {person_id: email.lower() for person_id, _, email, _, _ in people}
    managers: dict[str, set[str]] = {}
    for person_id, manager_id in await session.execute(
        select(PersonManager.person_id, PersonManager.manager_id)
        .where(PersonManager.organisation_id == org_id)
    ):
        managers.setdefault(person_id, set()).add(emails[manager_id])
    carried: dict[str, set[str]] = {}
    for person_id, tag_id in await session.execute(
        select(PersonTag.person_id, PersonTag.tag_id).where(PersonTag.organisation_id == org_id)
    ):
        carried.setdefault(person_id, set()).add(tag_keys[tag_id])
    by_email: dict[str, ExistingPerson] = {}
    for person_id, name, email, role_id, archived in people:
        by_email.setdefault(email.lower(), ExistingPerson(
            person_id, name, email.lower(), role_id, archived,
            frozenset(managers.get(person_id, ())), frozenset(carried.get(person_id, ())),
        ))
    return Existing(by_email, roles, tags)


async def acting_admin(session: AsyncSession, org_id: str) -> str:
    """The person the audit trail names: the organisation's longest-serving active admin."""
    found = await session.scalar(
        select(Person.id).join(Role, Role.id == Person.role_id)
        .where(Person.organisation_id == org_id, Person.archived.is_(False),
               Role.kind == ROLE_ADMIN)
        .order_by(Person.created_ms, Person.id).limit(1)
    )
    if found is None:
        raise ImportRefused(f"the organisation {org_id} has no active administrator")
    return str(found)


class _Batch:
    """One transaction's writes and their audit rows (rows get their ids when made: the
    batch is written by one flush)."""

    def __init__(self, session: AsyncSession, org_id: str, actor: str, now_ms: int) -> None:
        self.session, self.org_id, self.actor, self.now_ms = session, org_id, actor, now_ms
        self.audit: list[dict[str, Any]] = []

    def note(self, operation: str, arguments: dict[str, Any], response_id: str) -> None:
        self.audit.append({
            "organisation_id": self.org_id, "operation_name": operation,
            "person_id": self.actor, "timestamp_ms": self.now_ms, "arguments": arguments,
            "response_id": response_id, "response_ids": [response_id],
        })

    async def finish(self) -> None:
        await self.session.flush()
        if self.audit:
            await self.session.execute(_AUDIT, self.audit)


async def _tag_ids(session: AsyncSession, org_id: str) -> dict[str, str]:
    ids: dict[str, str] = {}
    for tag_id, name in await session.execute(
        select(Tag.id, Tag.name).where(Tag.organisation_id == org_id, Tag.archived.is_(False))
        .order_by(Tag.created_ms, Tag.id)
    ):
        ids.setdefault(tag_key(name), tag_id)
    return ids


async def _make_tags(batch: _Batch, names: Sequence[str]) -> None:
    """addTag for each tag the file names and the organisation lacks (still lacks)."""
    known = await _tag_ids(batch.session, batch.org_id)
    category = await default_tag_category(batch.session, batch.org_id)
    for name in names:
        if tag_key(name) in known:
            continue
        tag = Tag(organisation_id=batch.org_id, name=name, category_id=category.id,
                  parent_id=None, level=0, color=None, archived=False, settings={},
                  created_ms=batch.now_ms)
        batch.session.add(tag)
        await batch.session.flush()
        known[tag_key(name)] = tag.id
        batch.note("addTag", {"name": name}, tag.id)


def _tag(batch: _Batch, person_id: str, tag_id: str) -> None:
    relation = PersonTag(id=new_id(), organisation_id=batch.org_id, tag_id=tag_id,
                         person_id=person_id, start_ms=None)
    batch.session.add(relation)
    batch.note("tagPerson", {"tagId": tag_id, "personId": person_id}, relation.id)


def _add_person(batch: _Batch, change: Change, role: Role) -> str:
    row = change.row
    person = new_person(batch.org_id, row.name, row.email, role, batch.now_ms)
    person.id = new_id()  # known before the flush of the batch's people
    batch.session.add(person)
    batch.note("addPerson", {"name": row.name, "email": row.email, "roleId": role.id},
               person.id)
    return person.id


async def _write_person(
    batch: _Batch, change: Change, person_id: str, tag_ids: dict[str, str]
) -> None:
    """An existing person's name, role and tags; a new person's tags."""
    row, session = change.row, batch.session
    if change.kind == "update":
        if "name" in change.fields:
            await session.execute(update(Person).where(Person.id == person_id)
                                  .values(name=row.name))
            batch.note("editPersonName", {"id": person_id, "name": row.name}, person_id)
        if "role" in change.fields:
            await session.execute(update(Person).where(Person.id == person_id)
                                  .values(role_id=change.role.id))
            batch.note("editPersonRole", {"id": person_id, "roleId": change.role.id}, person_id)
    if change.tags_removed:
        removed = set(change.tags_removed)
        for relation_id, tag_id, name in list(await session.execute(
            select(PersonTag.id, PersonTag.tag_id, Tag.name).join(Tag, Tag.id == PersonTag.tag_id)
            .where(PersonTag.organisation_id == batch.org_id, PersonTag.person_id == person_id)
        )):
            if tag_key(name) in removed:
                await session.execute(delete(PersonTag).where(PersonTag.id == relation_id))
                batch.note("untagPerson", {"tagId": tag_id, "personId": person_id}, relation_id)
    for key in change.tags_added:
        if key in tag_ids:  # else archived or deleted since the plan: the next run says so
            _tag(batch, person_id, tag_ids[key])


async def _write_managers(batch: _Batch, change: Change, ids: dict[str, str]) -> None:
    person_id = ids[change.row.email]
    for email in change.managers_removed:
        manager_id = ids[email]
        relation = (await batch.session.scalars(select(PersonManager).where(
            PersonManager.organisation_id == batch.org_id,
            PersonManager.manager_id == manager_id, PersonManager.person_id == person_id,
        ))).first()
        if relation is not None:
            batch.note("removeManagerOfPerson", {"managerId": manager_id, "personId": person_id},
                       relation.id)
            await batch.session.execute(delete(PersonManager)
                                        .where(PersonManager.id == relation.id))
    for email in change.managers_added:
        relation = PersonManager(id=new_id(), organisation_id=batch.org_id,
                                 manager_id=ids[email], person_id=person_id,
                                 created_ms=batch.now_ms)
        batch.session.add(relation)
        batch.note("makeManagerOfPerson", {"managerId": ids[email], "personId": person_id},
                   relation.id)


async def _ids_by_email(
    session: AsyncSession, org_id: str, emails: Sequence[str]
) -> dict[str, str]:
    ids: dict[str, str] = {}
    if not emails:
        return ids
    for person_id, email in await session.execute(
        select(Person.id, Person.email)
        .where(Person.organisation_id == org_id, func.lower(Person.email).in_(set(emails)))
        .order_by(Person.created_ms, Person.id)
    ):
        ids.setdefault(email.lower(), person_id)
    return ids


async def apply(
    sessions: async_sessionmaker[AsyncSession], org_id: str, plan: Plan, clock: Clock,
    batch_size: int = 200, progress: Callable[[int], None] = lambda _n: None,
) -> Outcome:
    """Writes `plan` in transactions of `batch_size` rows; `progress(n)` after each batch (n:
    the steps done so far, of `steps(plan)`)."""
    async with unit_of_work(sessions) as session:
        actor = await acting_admin(session, org_id)
        if plan.new_tags:
            batch = _Batch(session, org_id, actor, clock())
            await _make_tags(batch, plan.new_tags)
            await batch.finish()
    people, managed = _phases(plan)
    skipped: list[str] = []
    for start in range(0, len(people), batch_size):
        chunk = people[start:start + batch_size]
        async with unit_of_work(sessions) as session:
            batch = _Batch(session, org_id, actor, clock())
            tag_ids = await _tag_ids(session, org_id)
            present = await _ids_by_email(session, org_id, [c.row.email for c in chunk
                                                            if c.kind == "add"])
            roles = {role.id: role for role in await session.scalars(
                select(Role).where(Role.organisation_id == org_id))}
            written: list[tuple[Change, str]] = []
            for change in chunk:
                if change.person_id is not None:
                    written.append((change, change.person_id))
                elif change.row.email in present:
                    skipped.append(change.row.email)  # added meanwhile: the next run compares
                else:
                    written.append((change, _add_person(batch, change, roles[change.role.id])))
            await session.flush()  # the people, before what refers to them
            for change, person_id in written:
                await _write_person(batch, change, person_id, tag_ids)
            await batch.finish()
        progress(start + len(chunk))
    for start in range(0, len(managed), batch_size):
        chunk = managed[start:start + batch_size]
        async with unit_of_work(sessions) as session:
            batch = _Batch(session, org_id, actor, clock())
            emails = [c.row.email for c in chunk]
            emails += [e for c in chunk for e in (*c.managers_added, *c.managers_removed)]
            ids = await _ids_by_email(session, org_id, emails)
            for change in chunk:
                if change.row.email in ids and all(e in ids for e in change.managers_added):
                    await _write_managers(batch, change, ids)
            await batch.finish()
        progress(len(people) + start + len(chunk))
    return Outcome(len({c.row.email for c in people + managed} - set(skipped)), tuple(skipped))


def _phases(plan: Plan) -> tuple[list[Change], list[Change]]:
    """The rows whose person is written (added, renamed, role, tags), those whose managers."""
    people = [c for c in plan.changes if c.kind == "add"
              or set(c.fields) & {"name", "role", "tags"}]
    managed = [c for c in plan.changes if c.managers_added or c.managers_removed]
    return people, managed


def steps(plan: Plan) -> int:
    people, managed = _phases(plan)
    return len(people) + len(managed)
