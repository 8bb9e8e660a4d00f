"""The timesheet workflow against the database: submit, approve, reject, restart after an
approver's edit. The rules themselves are in `stages`, `changes` and `edit_rights`.

Concurrency: every transition first locks the timesheet row (SELECT ... FOR UPDATE on
PostgreSQL; SQLite serialises writers with BEGIN IMMEDIATE) and re-reads it, so two approvals
of one stage at the same moment are applied one after the other: the second sees the stage
already moved on and is refused with a message naming the current stage.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, and_, bindparam, insert, inspect, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.util import identity_key

from plumbing.db import write_rows
from plumbing.ids import new_id
from service.approvals import changes as ch
from service.approvals import journal
from service.approvals import settings as cfg
from service.approvals import stages as st
from service.errors import BadInput, PermissionDenied, RuleViolation
from service.graphql.convert import iso
from service.models import (
    Organisation,
    Person,
    PersonManager,
    PersonTag,
    Role,
    Tag,
    TaskOwner,
    TimeRecord,
)
from service.models.approval import (
    STATUS_APPROVED,
    STATUS_DRAFT,
    STATUS_REJECTED,
    STATUS_SUBMITTED,
    Approval,
    ApprovalEvent,
    Timesheet,
)
from service.models.person import ROLE_ADMIN
from service.projects_access import project_manager_ids
from service.structure import descendants, parent_map
from service.webhooks.queue import EVENT_APPROVAL_UPDATE, enqueue

MAX_PERIOD_MS = 366 * 86_400_000
STATUS_WORDS = {"d": "draft", "s": "submitted", "a": "approved", "r": "rejected"}


def period_label(start_ms: int, end_ms: int) -> str:
    return f"{iso(start_ms)[:10]} to {iso(max(start_ms, end_ms - 1))[:10]}"


def stage_label(stages: list[dict[str, Any]], index: int) -> str:
    if 0 <= index < len(stages):
        return f"stage {index}: {st.STAGE_LABELS[stages[index]['type']]}"
    return f"stage {index}"


@dataclass
class Actor:
    """Who acts (None: the service itself) and when."""

    session: AsyncSession
    organisation: Organisation
    person: Person | None
    now_ms: int

    @property
    def id(self) -> str | None:
        return self.person.id if self.person is not None else None

    @property
    def is_admin(self) -> bool:
        return self.person is not None and self.person.role.kind == ROLE_ADMIN

    @property
    def name(self) -> str:
        return self.person.name if self.person is not None else "the service"


# --- reading -------------------------------------------------------------------------------


async def load_content(
    session: AsyncSession, org_id: str, person_id: str, start_ms: int, end_ms: int
) -> tuple[dict[str, dict[str, Any]], int]:
    """The timesheet's content, {record id: {fp, projects, task}}, and its total duration."""
    rows = await session.scalars(
        select(TimeRecord).where(
            TimeRecord.organisation_id == org_id,
            TimeRecord.person_id == person_id,
            TimeRecord.start_ms >= start_ms,
            TimeRecord.start_ms < end_ms,
        )
    )
    content: dict[str, dict[str, Any]] = {}
    total = 0
    for record in rows.unique():
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
) -> st.Directory:
    active = set(
        await session.scalars(
            select(Person.id).where(Person.organisation_id == org_id, Person.archived.is_(False))
        )
    )
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
    return st.Directory(
        owner_id=owner_id,
        active_ids=active,
        admin_ids=admins & active,
        people_manager_ids=people_managers,
        project_manager_ids=project_managers,
        task_manager_ids=task_managers,
        tagged_ids=tagged,
    )


# The statements read on every approval request, built once (building a statement and its
# cache key costs more than running it): the values are parameters.
_LOCK_TIMESHEET = (
    select(Timesheet)
    .where(Timesheet.id == bindparam("wf_id"))
    .with_for_update()
    .execution_options(populate_existing=True)
)
_TIMESHEETS_OVERLAPPING = (
    select(Timesheet)
    .where(
        Timesheet.organisation_id == bindparam("wf_org"),
        Timesheet.person_id == bindparam("wf_person"),
        Timesheet.start_ms < bindparam("wf_end"),
        Timesheet.end_ms > bindparam("wf_start"),
    )
    .order_by(Timesheet.updated_ms.desc())
)
# Built once (every time-record change asks it): the timesheet covering a moment.
_COVERING = (
    select(Timesheet)
    .where(
        Timesheet.organisation_id == bindparam("wf_org"),
        Timesheet.person_id == bindparam("wf_person"),
        Timesheet.start_ms <= bindparam("wf_moment"),
        Timesheet.end_ms > bindparam("wf_moment"),
        Timesheet.status != STATUS_DRAFT,
    )
    .order_by(Timesheet.updated_ms.desc())
    .limit(1)
)
_APPROVALS = select(Approval.stage, Approval.approver_id).where(
    Approval.submit_id == bindparam("wf_submit"), Approval.round == bindparam("wf_round")
)
_APPROVALS_DETAIL = (
    select(Approval.stage, Approval.approver_id, Approval.ts_ms)
    .where(Approval.submit_id == bindparam("wf_submit"), Approval.round == bindparam("wf_round"))
    .order_by(Approval.ts_ms, Approval.id)
)
# Persons are never written by the workflow: reading them needs no flush of what is pending.
_PEOPLE = (
    select(Person)
    .where(
        Person.organisation_id == bindparam("wf_org"),
        Person.id.in_(bindparam("wf_ids", expanding=True)),
    )
    .execution_options(autoflush=False)
)
# A submit event with its timesheet (locked) and the timesheet's owner, in one statement.
_SUBMISSION_COLUMNS = (ApprovalEvent, Timesheet, Person)
_SUBMISSION_WHERE = (
    ApprovalEvent.id == bindparam("wf_event"),
    ApprovalEvent.organisation_id == bindparam("wf_org"),
)
_SUBMISSION = (
    select(*_SUBMISSION_COLUMNS)
    .join(Timesheet, Timesheet.id == ApprovalEvent.timesheet_id)
    .join(Person, Person.id == Timesheet.person_id)
    .where(*_SUBMISSION_WHERE)
    .with_for_update(of=Timesheet)
    .execution_options(populate_existing=True)
)
# The same with the current round's approvals (a row each), for SQLite only: there the
# transaction holds the write lock from its BEGIN, so nothing changes between statements. On
# PostgreSQL a statement that waited for the row lock sees the locked row's new version but
# the other tables as they were when it started: approvals are read after the lock.
_SUBMISSION_WITH_APPROVALS = (
    select(*_SUBMISSION_COLUMNS, Approval.stage, Approval.approver_id)
    .join(Timesheet, Timesheet.id == ApprovalEvent.timesheet_id)
    .join(Person, Person.id == Timesheet.person_id)
    .outerjoin(
        Approval,
        and_(Approval.submit_id == Timesheet.submit_id, Approval.round == Timesheet.round),
    )
    .where(*_SUBMISSION_WHERE)
    .execution_options(populate_existing=True)
)
# On PostgreSQL, after the lock: the event again, with the current round's approvals.
_EVENT_WITH_APPROVALS = (
    select(ApprovalEvent, Approval.stage, Approval.approver_id)
    .outerjoin(
        Approval,
        and_(Approval.submit_id == bindparam("wf_submit"),
             Approval.round == bindparam("wf_round")),
    )
    .where(ApprovalEvent.id == bindparam("wf_event"))
    .execution_options(populate_existing=True)
)


def _on_sqlite(session: AsyncSession) -> bool:
    bind = session.bind
    return bind is not None and bind.dialect.name == "sqlite"


async def lock_timesheet(session: AsyncSession, timesheet_id: str) -> Timesheet:
    """The timesheet row, locked for this transaction and re-read from the database."""
    found = (await session.scalars(_LOCK_TIMESHEET, {"wf_id": timesheet_id})).one()
    return found


@dataclass
class Submission:
    """A submit event and its timesheet, locked for the transaction, and the timesheet's owner
    (held here, the session's `people` finds it without reading it again). `approvals`: the
    current round's {stage: approver ids}, when asked for."""

    event: ApprovalEvent
    timesheet: Timesheet
    owner: Person
    approvals: dict[int, set[str]] | None


async def lock_submission(
    session: AsyncSession, org_id: str, event_id: str, *, with_approvals: bool = False
) -> Submission | None:
    """The approval event of the organisation with its timesheet locked and re-read (None: no
    such event). One statement on SQLite: a transaction there reads one snapshot from its
    first statement to its end, and writers hold the write lock from BEGIN IMMEDIATE. On
    PostgreSQL the event (and the approvals) are read again by a second statement once the
    lock is held: the locking statement, if it waited, returns the timesheet's new version but
    the event as it was before (another transaction may have changed it meanwhile)."""
    params = {"wf_event": event_id, "wf_org": org_id}
    if _on_sqlite(session):
        if with_approvals:
            rows = (await session.execute(_SUBMISSION_WITH_APPROVALS, params)).all()
            if not rows:
                return None
            return Submission(rows[0][0], rows[0][1], rows[0][2], _approvals_in(rows))
        found = (await session.execute(_SUBMISSION, params)).first()
        return None if found is None else Submission(found[0], found[1], found[2], None)
    found = (await session.execute(_SUBMISSION, params)).first()
    if found is None:
        return None
    event, timesheet, owner = found
    if not with_approvals:
        await session.refresh(event)
        return Submission(event, timesheet, owner, None)
    reread = (await session.execute(_EVENT_WITH_APPROVALS, {
        "wf_event": event.id, "wf_submit": timesheet.submit_id, "wf_round": timesheet.round,
    })).all()
    return Submission(event, timesheet, owner, _approvals_in(reread))


def _approvals_in(rows: Iterable[Any]) -> dict[int, set[str]]:
    """{stage: approver ids} of rows with `stage` and `approver_id` columns (None: no row)."""
    approvals: dict[int, set[str]] = {}
    for row in rows:
        if row.stage is not None:
            approvals.setdefault(row.stage, set()).add(row.approver_id)
    return approvals


async def covering_timesheet(
    session: AsyncSession, org_id: str, person_id: str, moment_ms: int
) -> Timesheet | None:
    """The submitted, approved or rejected timesheet whose period contains the moment."""
    return (
        await session.scalars(
            _COVERING, {"wf_org": org_id, "wf_person": person_id, "wf_moment": moment_ms}
        )
    ).first()


async def timesheet_for_period(
    session: AsyncSession, org_id: str, person_id: str, start_ms: int, end_ms: int
) -> Timesheet | None:
    """The timesheet with exactly these bounds, else the latest one overlapping them."""
    rows = list(
        await session.scalars(
            _TIMESHEETS_OVERLAPPING,
            {"wf_org": org_id, "wf_person": person_id, "wf_start": start_ms, "wf_end": end_ms},
        )
    )
    for row in rows:
        if row.start_ms == start_ms and row.end_ms == end_ms:
            return row
    return rows[0] if rows else None


# A person's timesheets overlapping a period, each with its submit event's author and its
# current round's approvals (a row each, in the order approvals_detail gives them); one row
# with no timesheet when the person has none, no row when the person does not exist.
_PERIOD_STATE = (
    select(Person.id, Timesheet, ApprovalEvent.by_id, Approval.stage, Approval.approver_id,
           Approval.ts_ms)
    .select_from(Person)
    .outerjoin(
        Timesheet,
        and_(
            Timesheet.organisation_id == Person.organisation_id,
            Timesheet.person_id == Person.id,
            Timesheet.start_ms < bindparam("wf_end"),
            Timesheet.end_ms > bindparam("wf_start"),
        ),
    )
    .outerjoin(ApprovalEvent, ApprovalEvent.id == Timesheet.submit_id)
    .outerjoin(
        Approval,
        and_(Approval.submit_id == Timesheet.submit_id, Approval.round == Timesheet.round),
    )
    .where(Person.id == bindparam("wf_person"), Person.organisation_id == bindparam("wf_org"))
    .order_by(Timesheet.updated_ms.desc(), Timesheet.id, Approval.ts_ms, Approval.id)
)


@dataclass
class PeriodState:
    """What `period_state` read: the timesheet `timesheet_for_period` would give (None: no
    timesheet), its submit event's `by_id` and its `approvals_detail`."""

    timesheet: Timesheet | None
    submitted_by: str | None
    detail: dict[int, list[tuple[str, int]]]


async def period_state(
    session: AsyncSession, org_id: str, person_id: str, start_ms: int, end_ms: int
) -> PeriodState | None:
    """One statement for a person's approval state of a period (None: no such person in the
    organisation): `timesheet_for_period`, the submit event's author and `approvals_detail`."""
    rows = (await session.execute(_PERIOD_STATE, {
        "wf_org": org_id, "wf_person": person_id, "wf_start": start_ms, "wf_end": end_ms,
    })).all()
    if not rows:
        return None
    timesheets = [row[1] for row in rows if row[1] is not None]  # the latest updated first
    chosen = next(
        (t for t in timesheets if t.start_ms == start_ms and t.end_ms == end_ms),
        timesheets[0] if timesheets else None,
    )
    if chosen is None:
        return PeriodState(None, None, {})
    submitted_by: str | None = None
    detail: dict[int, list[tuple[str, int]]] = {}
    for row in rows:
        if row[1] is not chosen:
            continue
        submitted_by = row.by_id
        if row.stage is not None and chosen.submit_id is not None:
            detail.setdefault(row.stage, []).append((row.approver_id, row.ts_ms))
    return PeriodState(chosen, submitted_by, detail)


async def approvals_of(session: AsyncSession, timesheet: Timesheet) -> dict[int, set[str]]:
    """{stage: approver ids} of the current submission's current round."""
    found: dict[int, set[str]] = {}
    if timesheet.submit_id is None:
        return found
    for stage, approver in await session.execute(
        _APPROVALS, {"wf_submit": timesheet.submit_id, "wf_round": timesheet.round}
    ):
        found.setdefault(stage, set()).add(approver)
    return found


async def approvals_detail(
    session: AsyncSession, timesheet: Timesheet
) -> dict[int, list[tuple[str, int]]]:
    """{stage: [(approver id, ms)]} of the current submission's current round."""
    found: dict[int, list[tuple[str, int]]] = {}
    if timesheet.submit_id is None:
        return found
    for stage, approver, ts_ms in await session.execute(
        _APPROVALS_DETAIL, {"wf_submit": timesheet.submit_id, "wf_round": timesheet.round}
    ):
        found.setdefault(stage, []).append((approver, ts_ms))
    return found


def current_pending(timesheet: Timesheet, approvals: dict[int, set[str]]) -> list[str]:
    if timesheet.status != STATUS_SUBMITTED or not 0 <= timesheet.stage < len(timesheet.stages):
        return []
    return st.pending_approvers(
        timesheet.stages[timesheet.stage], approvals.get(timesheet.stage, set())
    )


def _loaded_person(session: AsyncSession, org_id: str, person_id: str) -> Person | None:
    """The person as this session already holds it (what a query would return, since it does
    not refresh loaded objects), or None when it must be read."""
    person = session.identity_map.get(identity_key(Person, person_id))
    if not isinstance(person, Person) or person.organisation_id != org_id:
        return None
    state = inspect(person)
    if not state.persistent or state.unloaded or person in session.deleted:
        return None
    return person


async def people(session: AsyncSession, org_id: str, ids: Iterable[str]) -> dict[str, Person]:
    found: dict[str, Person] = {}
    wanted: list[str] = []
    for person_id in sorted({i for i in ids if i}):
        person = _loaded_person(session, org_id, person_id)
        if person is None:
            wanted.append(person_id)
        else:
            found[person_id] = person
    if wanted:
        rows = await session.scalars(_PEOPLE, {"wf_org": org_id, "wf_ids": wanted})
        found.update((p.id, p) for p in rows.unique())
    return found


async def submit_event(session: AsyncSession, timesheet: Timesheet) -> ApprovalEvent:
    found = await session.get(ApprovalEvent, timesheet.submit_id)
    assert found is not None
    return found


# --- notifications -------------------------------------------------------------------------


def _summary(person: Person | None) -> dict[str, Any] | None:
    if person is None:
        return None
    return {"id": person.id, "name": person.name, "email": person.email}


async def notify(
    actor: Actor,
    timesheet: Timesheet,
    action: str,
    comment: str | None = None,
    event: str = EVENT_APPROVAL_UPDATE,
    approvals: dict[int, set[str]] | None = None,
) -> None:
    """Queue approvalEventUpdate: the event, person, period, status, stage, pending approvers.
    `approvals`: the current round's approvals when the caller has them up to date (else they
    are read; a timesheet that is not awaiting approval has no pending approvers at all)."""
    if timesheet.status != STATUS_SUBMITTED:
        pending: list[str] = []
    else:
        if approvals is None:
            approvals = await approvals_of(actor.session, timesheet)
        pending = current_pending(timesheet, approvals)
    found = await people(
        actor.session, timesheet.organisation_id, [timesheet.person_id, *pending]
    )
    stage_type = (
        timesheet.stages[timesheet.stage]["type"]
        if 0 <= timesheet.stage < len(timesheet.stages)
        else None
    )
    data = {
        "action": action,
        "submitId": timesheet.submit_id,
        "timesheetId": timesheet.id,
        "person": _summary(found.get(timesheet.person_id)),
        "startTime": timesheet.start_ms,
        "endTime": timesheet.end_ms,
        "status": timesheet.status,
        "stage": timesheet.stage,
        "stageType": stage_type,
        "stageCount": len(timesheet.stages),
        "pendingApprovers": [_summary(found.get(p)) for p in pending if p in found],
        "by": _summary(actor.person),
        "comment": comment,
    }
    await enqueue(actor.session, timesheet.organisation_id, event, data, actor.now_ms)


# --- transitions ---------------------------------------------------------------------------


# Events other than the submit event (approve, reject, auto_approve, restart) and approvals
# are written as they are made (Core INSERTs built once): nothing reads them back as objects.
_INSERT_EVENT = insert(cast(Table, ApprovalEvent.__table__))
_INSERT_APPROVAL = insert(cast(Table, Approval.__table__))


async def _record_event(
    timesheet: Timesheet, kind: str, status: str, stage: int, actor: Actor, **extra: Any
) -> None:
    """An approval event that follows the submit event (`submit_id=` among `extra`)."""
    await write_rows(actor.session, _INSERT_EVENT, {
        "id": new_id(),
        "organisation_id": timesheet.organisation_id,
        "timesheet_id": timesheet.id,
        "person_id": timesheet.person_id,
        "start_ms": timesheet.start_ms,
        "end_ms": timesheet.end_ms,
        "kind": kind,
        "status": status,
        "stage": stage,
        "ts_ms": actor.now_ms,
        "by_id": actor.id,
        **extra,
    })


async def _record_approval(
    actor: Actor, timesheet: Timesheet, stage: int, approver_id: str, *,
    carried_over: bool = False,
) -> None:
    assert timesheet.submit_id is not None
    await write_rows(actor.session, _INSERT_APPROVAL, {
        "id": new_id(),
        "organisation_id": timesheet.organisation_id,
        "timesheet_id": timesheet.id,
        "submit_id": timesheet.submit_id,
        "round": timesheet.round,
        "stage": stage,
        "approver_id": approver_id,
        "ts_ms": actor.now_ms,
        "carried_over": carried_over,
    })


def _event(
    timesheet: Timesheet, kind: str, status: str, stage: int, actor: Actor, **extra: Any
) -> ApprovalEvent:
    """The submit event: an object, the handle of the submission (returned, and changed as the
    submission moves on)."""
    event = ApprovalEvent(
        id=new_id(),
        organisation_id=timesheet.organisation_id,
        timesheet_id=timesheet.id,
        person_id=timesheet.person_id,
        start_ms=timesheet.start_ms,
        end_ms=timesheet.end_ms,
        kind=kind,
        status=status,
        stage=stage,
        ts_ms=actor.now_ms,
        by_id=actor.id,
        **extra,
    )
    actor.session.add(event)
    return event


async def _resolve(
    actor: Actor, owner: Person, content: dict[str, dict[str, Any]],
    extra_projects: Iterable[str] = (), extra_tasks: Iterable[str] = (),
) -> tuple[list[st.ResolvedStage], st.Directory]:
    config = (await cfg.resolve(actor.session, actor.organisation, owner, cfg.APPROVAL_STAGES)
              ).value or []
    projects, tasks = content_projects_tasks(content)
    tag_ids = [t for stage in config for t in stage.get("tagIds") or []]
    directory = await load_directory(
        actor.session, actor.organisation.id, owner.id,
        projects | set(extra_projects), tasks | set(extra_tasks), tag_ids,
    )
    return st.resolve_stages(config, projects, tasks, directory), directory


async def submit(
    actor: Actor, owner: Person, start_ms: int, end_ms: int, *, auto: bool = False
) -> ApprovalEvent:
    """Draft or rejected -> submitted (or approved at once when there is nothing to approve)."""
    session = actor.session
    if end_ms <= start_ms:
        raise BadInput("endTime", "must be after startTime")
    if end_ms - start_ms > MAX_PERIOD_MS:
        raise BadInput("endTime", "a timesheet period is at most 366 days")
    period = period_label(start_ms, end_ms)
    overlapping = list(
        await session.scalars(
            select(Timesheet).where(
                Timesheet.organisation_id == owner.organisation_id,
                Timesheet.person_id == owner.id,
                Timesheet.start_ms < end_ms,
                Timesheet.end_ms > start_ms,
                Timesheet.status != STATUS_DRAFT,
            )
        )
    )
    for other in overlapping:
        if other.start_ms != start_ms or other.end_ms != end_ms:
            raise RuleViolation(
                f"the period overlaps the {STATUS_WORDS[other.status]} timesheet for "
                f"{period_label(other.start_ms, other.end_ms)}; submit that period instead"
            )
    existing = (
        await session.scalars(
            select(Timesheet).where(
                Timesheet.organisation_id == owner.organisation_id,
                Timesheet.person_id == owner.id,
                Timesheet.start_ms == start_ms,
                Timesheet.end_ms == end_ms,
            )
        )
    ).first()
    if existing is not None:
        timesheet = await lock_timesheet(session, existing.id)
        if timesheet.status == STATUS_SUBMITTED:
            raise RuleViolation(
                f"the timesheet for {period} is already submitted and awaits "
                f"{stage_label(timesheet.stages, timesheet.stage)}"
            )
        if timesheet.status == STATUS_APPROVED:
            raise RuleViolation(f"the timesheet for {period} is already approved")
    else:
        timesheet = Timesheet(
            id=new_id(),
            organisation_id=owner.organisation_id,
            person_id=owner.id,
            start_ms=start_ms,
            end_ms=end_ms,
            status=STATUS_DRAFT,
            stage=0,
            round=0,
            stages=[],
            snapshot={},
            updated_ms=actor.now_ms,
        )
        try:
            async with session.begin_nested():
                session.add(timesheet)
                await session.flush()
        except IntegrityError:
            raise RuleViolation(
                f"the timesheet for {period} was just submitted by someone else"
            ) from None

    resubmission = timesheet.status == STATUS_REJECTED
    previous = dict(timesheet.snapshot or {})
    content, _total = await load_content(
        session, owner.organisation_id, owner.id, start_ms, end_ms
    )
    changes = ch.diff(previous, content) if resubmission else None
    touched_projects: set[str] = set()
    touched_tasks: set[str] = set()
    if changes is not None:
        touched_projects, touched_tasks = ch.touched(previous, content, changes)
    resolved, directory = await _resolve(
        actor, owner, content, touched_projects, touched_tasks
    )

    previous_by_type: dict[str, set[str]] = {}
    if resubmission:
        for stage, approvers in (await approvals_of(session, timesheet)).items():
            if 0 <= stage < len(timesheet.stages):
                previous_by_type.setdefault(timesheet.stages[stage]["type"], set()).update(
                    approvers
                )

    event = _event(
        timesheet,
        "auto_submit" if auto else "submit",
        STATUS_SUBMITTED,
        0,
        actor,
        changes=changes.as_json() if changes is not None else None,
        system_action="autoSubmit" if auto else ("resubmit" if resubmission else None),
    )
    event.submit_id = event.id
    timesheet.submit_id = event.id
    timesheet.round = 0
    timesheet.stages = [stage.as_json() for stage in resolved]
    timesheet.snapshot = content
    timesheet.rejected_by_id = None
    timesheet.updated_ms = actor.now_ms
    timesheet.status = STATUS_SUBMITTED
    timesheet.stage = 0
    await session.flush()

    by = "" if auto else f" by {actor.name}"
    if not any(not stage.skipped for stage in resolved):
        await journal.write_entry(
            session, timesheet, journal.AUTO_SUBMITTED if auto else journal.SUBMITTED, 0,
            actor.id, f"Timesheet for {period} submitted{by}", actor.now_ms,
        )
        await _finish_approved(actor, timesheet, event, automatic=True)
        return event

    # A manager who approved before and whose projects / tasks did not change stays approved.
    carried: dict[int, set[str]] = {}
    if resubmission and changes is not None:
        affected_pms, affected_tms = ch.affected_managers(
            touched_projects, touched_tasks,
            directory.project_manager_ids, directory.task_manager_ids,
        )
        for index, resolved_stage in enumerate(resolved):
            if resolved_stage.skipped:
                continue
            keep = ch.carried_over(
                resolved_stage.type, resolved_stage.approvers,
                previous_by_type, affected_pms, affected_tms,
            )
            if keep:
                carried[index] = keep
    first = st.first_open_stage(timesheet.stages, 0, {})
    timesheet.stage = first
    event.stage = first
    timesheet.stage_entered_ms = actor.now_ms
    timesheet.reminded_ms = None
    kind = journal.AUTO_SUBMITTED if auto else journal.SUBMITTED
    await journal.write_entry(
        session, timesheet, kind, first, actor.id,
        f"Timesheet for {period} submitted{by} for approval "
        f"({stage_label(timesheet.stages, first)})",
        actor.now_ms,
        current_pending(timesheet, {}),
    )
    approvals_now = await _carry(actor, timesheet, carried)
    if carried:
        await _advance(actor, timesheet, event, approvals_now, first, action="submitted")
    else:
        await notify(actor, timesheet, "submitted")
    return event


async def _carry(
    actor: Actor, timesheet: Timesheet, carried: dict[int, set[str]]
) -> dict[int, set[str]]:
    """Record approvals carried over from the previous submission."""
    assert timesheet.submit_id is not None
    found = await people(actor.session, timesheet.organisation_id,
                         [p for ps in carried.values() for p in ps])
    for index, approvers in sorted(carried.items()):
        for approver in sorted(approvers):
            await _record_approval(actor, timesheet, index, approver, carried_over=True)
            name = found[approver].name if approver in found else approver
            await journal.write_entry(
                actor.session, timesheet, journal.APPROVED, index, approver,
                f"Approved by {name} ({stage_label(timesheet.stages, index)}), carried over: "
                f"none of their projects or tasks changed since the previous submission",
                actor.now_ms,
            )
    return {index: set(approvers) for index, approvers in carried.items()}


async def _advance(
    actor: Actor,
    timesheet: Timesheet,
    event: ApprovalEvent,
    approvals: dict[int, set[str]],
    start: int,
    action: str,
) -> None:
    """Move past every stage whose quorum is met; approved when none is left."""
    nxt = st.first_open_stage(timesheet.stages, start, approvals)
    if nxt >= len(timesheet.stages):
        await _finish_approved(actor, timesheet, event, automatic=False)
        return
    if nxt != timesheet.stage:
        timesheet.stage = nxt
        timesheet.stage_entered_ms = actor.now_ms
        timesheet.reminded_ms = None
    event.stage = timesheet.stage
    event.status = STATUS_SUBMITTED
    await notify(actor, timesheet, action, approvals=approvals)


async def _finish_approved(
    actor: Actor, timesheet: Timesheet, event: ApprovalEvent, *, automatic: bool
) -> None:
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    last = st.last_active_stage(timesheet.stages)
    timesheet.status = STATUS_APPROVED
    timesheet.stage = last if last is not None else 0
    timesheet.updated_ms = actor.now_ms
    event.status = STATUS_APPROVED
    event.stage = timesheet.stage
    if automatic:
        why = ("no approval workflow is configured" if not timesheet.stages
               else "no stage has an eligible approver")
        await journal.write_entry(
            actor.session, timesheet, journal.AUTO_APPROVED, timesheet.stage, None,
            f"Timesheet for {period} auto-approved: {why}", actor.now_ms,
        )
        await _record_event(timesheet, "auto_approve", STATUS_APPROVED, timesheet.stage, actor,
                            submit_id=event.id, system_action="autoApprove")
    await notify(actor, timesheet, "autoApproved" if automatic else "approved")


def _moved_on(timesheet: Timesheet, caller_id: str) -> str | None:
    """When the caller approves stages that are already done: the refusal naming the current."""
    for index, stage in enumerate(timesheet.stages):
        if index < timesheet.stage and caller_id in (stage.get("approvers") or []):
            return (
                f"{stage_label(timesheet.stages, index)} has already been approved; the "
                f"timesheet is now at {stage_label(timesheet.stages, timesheet.stage)}"
            )
    return None


async def approve(actor: Actor, submission: Submission) -> ApprovalEvent:
    """An approval by the caller: of the current stage if they are one of its approvers, else
    (administrators) of the whole timesheet. `submission`: from `lock_submission`.

    Nothing is flushed here: the rows are written by the one flush that ends the mutation
    (the reads in between, of persons and webhooks, need none)."""
    assert actor.person is not None
    session = actor.session
    event, timesheet = submission.event, submission.timesheet
    caller = actor.person
    if caller.id == timesheet.person_id:
        raise RuleViolation("no one may approve their own timesheet (administrators included)")
    if timesheet.submit_id != event.id:
        raise RuleViolation(
            f"this submission was replaced by a later one (submit event {timesheet.submit_id})"
        )
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    if timesheet.status != STATUS_SUBMITTED:
        raise RuleViolation(
            f"the timesheet for {period} is {STATUS_WORDS[timesheet.status]}, "
            f"not awaiting approval"
        )
    approvals = (
        submission.approvals if submission.approvals is not None
        else await approvals_of(session, timesheet)
    )
    index = timesheet.stage
    stage = timesheet.stages[index]
    here = stage_label(timesheet.stages, index)
    if caller.id in (stage.get("approvers") or []):
        if caller.id in approvals.get(index, set()):
            pending = current_pending(timesheet, approvals)
            found = await people(session, timesheet.organisation_id, pending)
            raise RuleViolation(
                f"you have already approved {here}; it awaits "
                + ", ".join(found[p].name for p in pending if p in found)
            )
        override = False
    elif actor.is_admin:
        override = True
    else:
        moved = _moved_on(timesheet, caller.id)
        if moved is not None:
            raise RuleViolation(moved)
        raise PermissionDenied(f"you are not an approver of the current stage ({here})")
    await _record_approval(actor, timesheet, index, caller.id)
    approvals.setdefault(index, set()).add(caller.id)
    timesheet.updated_ms = actor.now_ms
    note = ", administrator override of every remaining stage" if override else ""
    entry_id = await journal.write_entry(
        session, timesheet, journal.APPROVED, index, caller.id,
        f"Approved by {caller.name} ({here}{note})", actor.now_ms,
    )
    if override:
        await _record_event(timesheet, "approve", STATUS_APPROVED, index, actor,
                            submit_id=event.id, system_action="adminOverride")
        await _finish_approved(actor, timesheet, event, automatic=False)
        return event
    before = timesheet.stage
    await _advance(actor, timesheet, event, approvals, index, action="approved")
    await _record_event(timesheet, "approve", timesheet.status, before, actor,
                        submit_id=event.id)
    if timesheet.status == STATUS_SUBMITTED and timesheet.stage != before:
        # The next stage's approvers see the request in their Journal.
        await journal.write_mentions(
            session, timesheet.organisation_id, entry_id,
            [(p, "person") for p in current_pending(timesheet, approvals)], start=1,
        )
    return event


async def reject(
    actor: Actor, submission: Submission, stage: int, comment: str
) -> ApprovalEvent:
    """Submitted (current stage) or approved (admins, last-stage approvers) -> rejected.
    `submission`: from `lock_submission`; the rows are written by the flush that ends the
    mutation."""
    assert actor.person is not None
    session = actor.session
    reason = (comment or "").strip()
    if not reason:
        raise BadInput("comment", "a reason is always required to reject a timesheet")
    event, timesheet = submission.event, submission.timesheet
    caller = actor.person
    if caller.id == timesheet.person_id:
        raise RuleViolation("no one may reject their own timesheet")
    if timesheet.submit_id != event.id:
        raise RuleViolation(
            f"this submission was replaced by a later one (submit event {timesheet.submit_id})"
        )
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    here = stage_label(timesheet.stages, timesheet.stage)
    if timesheet.status == STATUS_SUBMITTED:
        approvers = timesheet.stages[timesheet.stage].get("approvers") or []
        if caller.id not in approvers and not actor.is_admin:
            moved = _moved_on(timesheet, caller.id)
            if moved is not None:
                raise RuleViolation(moved)
            raise PermissionDenied(f"you are not an approver of the current stage ({here})")
        if stage != timesheet.stage:
            raise BadInput(
                "stage", f"the timesheet is at {here}, not stage {stage}; reject the current stage"
            )
    elif timesheet.status == STATUS_APPROVED:
        last = st.last_active_stage(timesheet.stages)
        last_approvers = (timesheet.stages[last].get("approvers") or []) if last is not None else []
        if not actor.is_admin and caller.id not in last_approvers:
            raise PermissionDenied(
                "an approved timesheet may be rejected only by an administrator or an "
                "approver of its last stage"
            )
        if stage != timesheet.stage:
            raise BadInput(
                "stage", f"the approved timesheet ended at {here}, not stage {stage}"
            )
    else:
        raise RuleViolation(
            f"the timesheet for {period} is {STATUS_WORDS[timesheet.status]}; only a submitted "
            f"or approved timesheet can be rejected"
        )
    timesheet.status = STATUS_REJECTED
    timesheet.rejected_by_id = caller.id
    timesheet.updated_ms = actor.now_ms
    event.status = STATUS_REJECTED
    event.rejected_stage = stage
    event.comment = reason
    await _record_event(timesheet, "reject", STATUS_REJECTED, stage, actor, submit_id=event.id,
                        comment=reason, rejected_stage=stage)
    await journal.write_entry(
        session, timesheet, journal.REJECTED, stage, caller.id,
        f"Rejected by {caller.name} ({here}): {reason}", actor.now_ms,
    )
    await notify(actor, timesheet, "rejected", reason)
    return event


async def restart(actor: Actor, timesheet: Timesheet) -> None:
    """An approver edited a submitted timesheet: the workflow restarts from the first stage,
    with approvers resolved again from the changed content."""
    session = actor.session
    timesheet = await lock_timesheet(session, timesheet.id)
    if timesheet.status != STATUS_SUBMITTED:
        return
    owner = await session.get(Person, timesheet.person_id)
    assert owner is not None
    content, _total = await load_content(
        session, timesheet.organisation_id, timesheet.person_id,
        timesheet.start_ms, timesheet.end_ms,
    )
    resolved, _directory = await _resolve(actor, owner, content)
    event = await submit_event(session, timesheet)
    timesheet.round += 1
    timesheet.stages = [stage.as_json() for stage in resolved]
    timesheet.updated_ms = actor.now_ms
    await _record_event(timesheet, "restart", STATUS_SUBMITTED, 0, actor, submit_id=event.id,
                        system_action="restartAfterApproverEdit")
    period = period_label(timesheet.start_ms, timesheet.end_ms)
    if not any(not stage.skipped for stage in resolved):
        await _finish_approved(actor, timesheet, event, automatic=True)
        return
    first = st.first_open_stage(timesheet.stages, 0, {})
    timesheet.stage = first
    timesheet.stage_entered_ms = actor.now_ms
    timesheet.reminded_ms = None
    event.stage = first
    event.status = STATUS_SUBMITTED
    await journal.write_entry(
        session, timesheet, journal.SUBMITTED, first, actor.id,
        f"Timesheet for {period} submitted for approval again "
        f"({stage_label(timesheet.stages, first)}): the workflow restarted after an edit by "
        f"{actor.name}",
        actor.now_ms,
        current_pending(timesheet, {}),
    )
    await session.flush()
    await notify(actor, timesheet, "restarted")
