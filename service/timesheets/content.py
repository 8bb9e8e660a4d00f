"""A timesheet's content (its time records, fingerprinted) and the approval stages it needs:
who manages the projects, tasks, people and tags the content touches, and the stages those
resolve to."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.absences import reviewed, unreviewed_type_ids
from service.access import project_manager_ids
from service.models import (
    ROLE_ADMIN,
    Person,
    PersonManager,
    PersonTag,
    Role,
    Tag,
    TaskManager,
    TaskOwner,
    TimeRecord,
)
from service.organisation import APPROVAL_STAGES, resolve
from service.structure import descendants, parent_map
from service.timesheets import changes as ch
from service.timesheets import stages as st
from service.timesheets.actor import Actor

ACTIVE_SLICE = 500  # ids per query when looking up who of the candidates is active


async def load_content(
    session: AsyncSession, org_id: str, person_id: str, start_ms: int, end_ms: int,
    records: Sequence[TimeRecord] | None = None,
) -> tuple[dict[str, dict[str, Any]], int]:
    """The timesheet's content, {record id: {fp, projects, task}}, and its total duration:
    the records its approvers review (not time off approved automatically or needing no
    approval: service/absences/approval.py). `records`: every record of the period, when the
    caller read them in this transaction (submitTimesheet's entry rules did): not read again."""
    if records is None:
        rows = await session.scalars(
            select(TimeRecord).where(
                TimeRecord.organisation_id == org_id,
                TimeRecord.person_id == person_id,
                TimeRecord.start_ms >= start_ms,
                TimeRecord.start_ms < end_ms,
                reviewed(org_id),
            )
        )
        return _content_of(rows.unique())
    unreviewed = (await unreviewed_type_ids(session, org_id)
                  if any(record.absence_id is not None for record in records) else set())
    return _content_of(record for record in records if record.absence_id not in unreviewed)


def _content_of(records: Iterable[TimeRecord]) -> tuple[dict[str, dict[str, Any]], int]:
    """The content and total duration of these records (those the approvers review)."""
    content: dict[str, dict[str, Any]] = {}
    total = 0
    for record in records:
        projects = sorted(p.id for p in record.projects)
        facts = {
            "start": record.start_ms,
            "end": record.end_ms,
            "duration": record.duration_ms,
            "projects": projects,
            "task": record.task_id,
            "absence": record.absence_id,
            "comment": record.comment,
            "nonBillable": record.non_billable,
            "wfh": record.wfh,
        }
        content[record.id] = {
            "fp": ch.fingerprint(facts),
            "projects": projects,
            "task": record.task_id,
        }
        total += record.duration_ms
    return content, total


def content_projects_tasks(content: dict[str, dict[str, Any]]) -> tuple[set[str], set[str]]:
    projects: set[str] = set()
    tasks: set[str] = set()
    for facts in content.values():
        projects.update(facts.get("projects") or [])
        if facts.get("task"):
            tasks.add(str(facts["task"]))
    return projects, tasks


async def load_directory(
    session: AsyncSession,
    org_id: str,
    owner_id: str,
    project_ids: Iterable[str],
    task_ids: Iterable[str],
    tag_ids: Iterable[str],
    named_ids: Iterable[str] = (),
) -> st.Directory:
    """Who may approve this content. Only the candidates (the administrators, the owner's
    managers, the managers of the content's projects and tasks, the people carrying the stages'
    tags, the people stages name) are looked up as active or not: never the whole
    organisation, so a submission costs the same in an organisation of 100 or 10,000."""
    admins = set(
        await session.scalars(
            select(Person.id)
            .join(Role, Role.id == Person.role_id)
            .where(Person.organisation_id == org_id, Role.kind == ROLE_ADMIN)
        )
    )
    people_managers = set(
        await session.scalars(
            select(PersonManager.manager_id).where(
                PersonManager.organisation_id == org_id, PersonManager.person_id == owner_id
            )
        )
    )
    project_managers = {
        pid: await project_manager_ids(session, org_id, pid) for pid in sorted(set(project_ids))
    }
    task_managers: dict[str, set[str]] = {}
    tasks = sorted(set(task_ids))
    if tasks:
        for task_id, person_id in await session.execute(
            select(TaskOwner.task_id, TaskOwner.person_id).where(
                TaskOwner.organisation_id == org_id,
                TaskOwner.task_id.in_(tasks),
                TaskOwner.potential.is_(False),
            )
        ):
            task_managers.setdefault(task_id, set()).add(person_id)
        for task_id, person_id in await session.execute(  # makeManagerOfTask
            select(TaskManager.task_id, TaskManager.person_id).where(
                TaskManager.organisation_id == org_id, TaskManager.task_id.in_(tasks))
        ):
            task_managers.setdefault(task_id, set()).add(person_id)
    tagged: dict[str, set[str]] = {}
    tags = sorted(set(tag_ids))
    if tags:
        parents = await parent_map(session, Tag, org_id)
        for tag_id in tags:
            family = [tag_id, *descendants(parents, [tag_id])]
            tagged[tag_id] = set(
                await session.scalars(
                    select(PersonTag.person_id).where(
                        PersonTag.organisation_id == org_id, PersonTag.tag_id.in_(family)
                    )
                )
            )
    candidates = admins | people_managers | set(named_ids) | {owner_id}
    for group in (*project_managers.values(), *task_managers.values(), *tagged.values()):
        candidates |= group
    active = await _active_among(session, org_id, candidates)
    return st.Directory(
        owner_id=owner_id,
        active_ids=active,
        admin_ids=admins & active,
        people_manager_ids=people_managers,
        project_manager_ids=project_managers,
        task_manager_ids=task_managers,
        tagged_ids=tagged,
    )


async def _active_among(session: AsyncSession, org_id: str, ids: set[str]) -> set[str]:
    """Which of these people are active (in slices: a tag may carry thousands)."""
    ordered = sorted(ids)
    active: set[str] = set()
    for first in range(0, len(ordered), ACTIVE_SLICE):
        active.update(await session.scalars(select(Person.id).where(
            Person.organisation_id == org_id, Person.archived.is_(False),
            Person.id.in_(ordered[first:first + ACTIVE_SLICE]))))
    return active


async def resolve_stages(
    actor: Actor, owner: Person, content: dict[str, dict[str, Any]],
    extra_projects: Iterable[str] = (), extra_tasks: Iterable[str] = (),
) -> tuple[list[st.ResolvedStage], st.Directory]:
    """The owner's configured stages resolved for the content, with the directory they were
    resolved in (whose managers also cover the extra projects and tasks: those a resubmission's
    changes touched, before or after the change)."""
    config = (await resolve(actor.session, actor.organisation, owner, APPROVAL_STAGES)
              ).value or []
    projects, tasks = content_projects_tasks(content)
    tag_ids = [t for stage in config for t in stage.get("tagIds") or []]
    named = [p for stage in config for p in stage.get("personIds") or [] if p]
    directory = await load_directory(
        actor.session, actor.organisation.id, owner.id,
        projects | set(extra_projects), tasks | set(extra_tasks), tag_ids, named,
    )
    return st.resolve_stages(config, projects, tasks, directory), directory
