"""The services of the legacy interface, one handler each, on the GraphQL interface's data.

Mapping (see docs/legacy.md): a company is a top-level project (`Project.parent_id` None); a
project is any project below one (level >= 1); an absence is an absence type; a time entry
is a time record. Handlers act as the token's person with that person's role, like GraphQL
resolvers, and write audit-trail rows under the equivalent GraphQL operation names.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import PermissionDenied
from service.graphql.context import RequestContext
from service.item_access import check_owner_access
from service.legacy.errors import InvalidServiceRequest, LegacyError
from service.legacy.xids import XidMap, validate_xid
from service.models import (
    AbsenceType,
    AuditTrail,
    Person,
    Project,
    Task,
    TimeRecord,
    time_record_projects,
)
from service.project_lookup import default_project_category
from service.rules.timesheet_edits import (
    guard_time_record_change,
    may_edit_by_status,
    record_time_record_change,
)
from service.timerecords_rules import check_task_allowed

DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
MAX_NAME_LENGTH = 255


class LegacyNotFound(LegacyError):
    def __init__(self, what: str, ref: dict[str, Any] | None) -> None:
        named = ", ".join(f"{key} {value!r}" for key, value in (ref or {}).items())
        super().__init__(f"{what} not found" + (f": {named}" if named else ""))


@dataclass
class LegacyRequest:
    """One legacy call: the GraphQL request context (session, organisation, person, clock,
    now) and the parsed body."""

    context: RequestContext
    payload: dict[str, Any]
    _xids: dict[str, XidMap] = field(default_factory=dict)

    @property
    def session(self) -> AsyncSession:
        return self.context.session

    @property
    def org_id(self) -> str:
        return self.context.org_id

    def xids(self, kind: str) -> XidMap:
        if kind not in self._xids:
            self._xids[kind] = XidMap(self.context.session, self.org_id, kind)
        return self._xids[kind]

    @property
    def timezone(self) -> ZoneInfo:
        try:
            return ZoneInfo(self.context.organisation.timezone or "UTC")
        except (ZoneInfoNotFoundError, ValueError):
            return ZoneInfo("UTC")

    def member(self, name: str, required: bool = False) -> dict[str, Any]:
        """The object member `name` of the body ({} when absent and not required)."""
        value = self.payload.get(name)
        if value is None:
            if required:
                raise InvalidServiceRequest(f"the member {name} (an object) is required")
            return {}
        if not isinstance(value, dict):
            raise InvalidServiceRequest(f"the member {name} must be an object")
        return value

    def audit(self, operation: str, arguments: dict[str, Any], entity_id: str) -> None:
        self.session.add(
            AuditTrail(
                organisation_id=self.org_id,
                operation_name=operation,
                person_id=self.context.person.id,
                timestamp_ms=self.context.clock.now_ms(),
                arguments=json.loads(json.dumps(arguments, default=str)),
                response_id=entity_id,
                response_ids=[entity_id],
            )
        )


Handler = Callable[[LegacyRequest], Awaitable[dict[str, Any]]]
SERVICES: dict[str, Handler] = {}


def service(name: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        SERVICES[name] = handler
        return handler

    return register


async def dispatch(request: LegacyRequest) -> dict[str, Any]:
    name = request.payload.get("service")
    if not isinstance(name, str) or not name:
        raise InvalidServiceRequest("the member service (a string) is required")
    handler = SERVICES.get(name)
    if handler is None:
        known = ", ".join(sorted(SERVICES))
        raise InvalidServiceRequest(f"unknown service {name!r} (services: {known})")
    return await handler(request)


# --- value conventions --------------------------------------------------------------------


def parse_datetime(value: Any, member: str, zone: ZoneInfo) -> int:
    """`YYYY-MM-DD HH:MM:SS` in the organisation's time zone, as Unix ms."""
    if not isinstance(value, str):
        raise InvalidServiceRequest(f"{member} must be a string YYYY-MM-DD HH:MM:SS")
    try:
        moment = datetime.strptime(value, DATETIME_FORMAT)
    except ValueError:
        raise InvalidServiceRequest(
            f"{member} must use the format YYYY-MM-DD HH:MM:SS, got {value!r}"
        ) from None
    if not 1900 <= moment.year < 3000:
        raise InvalidServiceRequest(f"{member} must lie between 1900 and 2999, got {value!r}")
    return int(moment.replace(tzinfo=zone).timestamp() * 1000)


def format_datetime(ms: int, zone: ZoneInfo) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).astimezone(zone).strftime(DATETIME_FORMAT)


def seconds(ms: int) -> int | float:
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def string_field(data: dict[str, Any], name: str, member: str, required: bool) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise InvalidServiceRequest(f"{member}.{name} is required")
        return None
    if not isinstance(value, str):
        raise InvalidServiceRequest(f"{member}.{name} must be a string")
    return value


def name_field(data: dict[str, Any], member: str) -> str:
    name = (string_field(data, "name", member, True) or "").strip()
    if not name:
        raise InvalidServiceRequest(f"{member}.name must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidServiceRequest(f"{member}.name is longer than {MAX_NAME_LENGTH} characters")
    return name


def bool_field(data: dict[str, Any], name: str, member: str, default: bool | None) -> bool | None:
    value = data.get(name, default)
    if value is not None and not isinstance(value, bool):
        raise InvalidServiceRequest(f"{member}.{name} must be true or false")
    return value  # type: ignore[no-any-return]


def identifier(request: LegacyRequest, resource: str) -> dict[str, Any]:
    """What a get-type service names: top-level `id`/`xid`, or the same inside the resource."""
    for source in (request.payload, request.member(resource)):
        ref = {key: source[key] for key in ("xid", "id") if source.get(key) is not None}
        if ref:
            return ref
    raise InvalidServiceRequest(f"{resource}.get needs an id or an xid")


# --- companies and projects ---------------------------------------------------------------


@dataclass
class ProjectTree:
    projects: dict[str, Project]
    children: dict[str | None, list[str]]

    def descendants(self, project_id: str) -> list[str]:
        found: list[str] = []
        stack = list(self.children.get(project_id, []))
        while stack:
            current = stack.pop()
            found.append(current)
            stack.extend(self.children.get(current, []))
        return found

    def company_of(self, project_id: str) -> str:
        current = self.projects[project_id]
        seen = {current.id}
        while current.parent_id is not None and current.parent_id in self.projects:
            current = self.projects[current.parent_id]
            if current.id in seen:
                break
            seen.add(current.id)
        return current.id


async def project_tree(request: LegacyRequest) -> ProjectTree:
    rows = await request.session.scalars(
        select(Project)
        .where(Project.organisation_id == request.org_id)
        .order_by(func.lower(Project.name), Project.id)
    )
    projects = {project.id: project for project in rows.unique()}
    children: dict[str | None, list[str]] = {}
    for project in projects.values():
        parent = project.parent_id if project.parent_id in projects else None
        children.setdefault(parent, []).append(project.id)
    return ProjectTree(projects, children)


async def resolve_ref(
    request: LegacyRequest, kind: str, value: Any, member: str
) -> tuple[str | None, dict[str, Any]]:
    ref = value if isinstance(value, dict) else {}
    return await request.xids(kind).entity_id(value, member), ref


async def find_company(request: LegacyRequest, value: Any, member: str) -> Project:
    entity_id, ref = await resolve_ref(request, "projects", value, member)
    company = None
    if entity_id is not None:
        company = (
            await request.session.scalars(
                select(Project).where(
                    Project.id == entity_id,
                    Project.organisation_id == request.org_id,
                    Project.parent_id.is_(None),
                )
            )
        ).one_or_none()
    if company is None:
        raise LegacyNotFound("Company", ref)
    return company  # type: ignore[no-any-return]


async def company_dict(
    request: LegacyRequest, company: Project, tree: ProjectTree
) -> dict[str, Any]:
    return {
        **(await request.xids("projects").ref(company.id) or {}),
        "name": company.name,
        "active": not company.archived,
        "projects": {"count": len(tree.descendants(company.id))},
    }


@service("company.create")
async def company_create(request: LegacyRequest) -> dict[str, Any]:
    data = request.member("company", required=True)
    name = name_field(data, "company")
    xid = validate_xid(data.get("xid"), "company")
    if not request.context.is_admin:
        raise PermissionDenied("only an administrator may create companies")
    xids = request.xids("projects")
    if xid is not None:
        holder = await xids.holder(xid)
        if holder is not None:
            if await request.session.get(Project, holder) is not None:
                raise LegacyError(f"The xid {xid!r} is already used by another company or project")
            await xids.release(holder)
    category = await default_project_category(request.session, request.org_id)
    company = Project(
        organisation_id=request.org_id,
        name=name,
        parent_id=None,
        category_id=category.id,
        level=0,
        archived=False,
        availability=None,
        created_ms=request.context.now_ms,
    )
    request.session.add(company)
    await request.session.flush()
    if xid is not None:
        try:
            await xids.claim(xid, company.id, request.context.now_ms)
        except IntegrityError:
            raise LegacyError(
                f"The xid {xid!r} is already used by another company or project"
            ) from None
    request.audit(
        "addProject", {"name": name, "xid": xid, "legacyService": "company.create"}, company.id
    )
    return {"xid": xid} if xid is not None else {"id": company.id}


@service("company.get")
async def company_get(request: LegacyRequest) -> dict[str, Any]:
    company = await find_company(request, identifier(request, "company"), "company")
    tree = await project_tree(request)
    return {"company": await company_dict(request, company, tree)}


def active_filter(request: LegacyRequest, resource: str) -> bool | None:
    return bool_field(request.member(resource), "active", resource, None)


@service("company.list")
async def company_list(request: LegacyRequest) -> dict[str, Any]:
    active = active_filter(request, "company")
    tree = await project_tree(request)
    companies = [
        await company_dict(request, tree.projects[company_id], tree)
        for company_id in tree.children.get(None, [])
        if active is None or active != tree.projects[company_id].archived
    ]
    return {"companies": companies}


def company_filter_value(request: LegacyRequest, resource: str) -> Any:
    """The `company {id|xid}` filter: top-level (as absence.list shows) or in the resource."""
    value = request.payload.get("company")
    if value is None:
        value = request.member(resource).get("company")
    return value


@service("project.list")
async def project_list(request: LegacyRequest) -> dict[str, Any]:
    active = active_filter(request, "project")
    tree = await project_tree(request)
    company_value = company_filter_value(request, "project")
    if company_value is not None:
        company = await find_company(request, company_value, "company")
        ids = set(tree.descendants(company.id))
    else:
        top_level = set(tree.children.get(None, []))
        ids = {project_id for project_id in tree.projects if project_id not in top_level}
    xids = request.xids("projects")
    projects = []
    for project in tree.projects.values():
        if project.id not in ids or (active is not None and active == project.archived):
            continue
        projects.append(
            {
                **(await xids.ref(project.id) or {}),
                "name": project.name,
                "active": not project.archived,
                "level": project.level,
                "company": await xids.ref(tree.company_of(project.id)),
                "parent": await xids.ref(project.parent_id),
            }
        )
    return {"projects": projects}


# --- absences and persons -----------------------------------------------------------------


@service("absence.list")
async def absence_list(request: LegacyRequest) -> dict[str, Any]:
    company_value = company_filter_value(request, "absence")
    if company_value is not None:
        # Absence types are account-wide: every company of the account offers all of them.
        await find_company(request, company_value, "company")
    active = active_filter(request, "absence")
    rows = await request.session.scalars(
        select(AbsenceType)
        .where(AbsenceType.organisation_id == request.org_id)
        .order_by(func.lower(AbsenceType.name), AbsenceType.id)
    )
    xids = request.xids("absence_types")
    absences = [
        {
            **(await xids.ref(absence.id) or {}),
            "name": absence.name,
            "unit": absence.unit,
            "involve_costs": absence.involve_costs,
            "active": not absence.archived,
        }
        for absence in rows
        if active is None or active != absence.archived
    ]
    return {"absences": absences}


async def person_dict(request: LegacyRequest, person: Person) -> dict[str, Any]:
    return {
        **(await request.xids("persons").ref(person.id) or {}),
        "name": person.name,
        "email": person.email,
        "active": not person.archived,
        "role": person.role.name,
    }


@service("person.list")
async def person_list(request: LegacyRequest) -> dict[str, Any]:
    active = active_filter(request, "person")
    rows = await request.session.scalars(
        select(Person)
        .where(Person.organisation_id == request.org_id)
        .order_by(func.lower(Person.name), Person.id)
    )
    return {
        "persons": [
            await person_dict(request, person)
            for person in rows.unique()
            if active is None or active != person.archived
        ]
    }


async def find_in_org(
    request: LegacyRequest, model: type[Any], kind: str, value: Any, member: str, what: str
) -> Any:
    entity_id, ref = await resolve_ref(request, kind, value, member)
    found = None
    if entity_id is not None:
        found = (
            await request.session.scalars(
                select(model).where(model.id == entity_id, model.organisation_id == request.org_id)
            )
        ).unique().one_or_none()
    if found is None:
        raise LegacyNotFound(what, ref)
    return found


@service("person.get")
async def person_get(request: LegacyRequest) -> dict[str, Any]:
    value = identifier(request, "person")
    person = await find_in_org(request, Person, "persons", value, "person", "Person")
    return {"person": await person_dict(request, person)}


# --- time entries -------------------------------------------------------------------------


@service("time_entry.create")
async def time_entry_create(request: LegacyRequest) -> dict[str, Any]:
    context = request.context
    data = request.member("time_entry", required=True)
    member = "time_entry"
    xid = validate_xid(data.get("xid"), member)
    zone = request.timezone
    start_ms = parse_datetime(data.get("start"), f"{member}.start", zone)
    end_ms: int | None = None
    if data.get("end") is not None:
        end_ms = parse_datetime(data.get("end"), f"{member}.end", zone)
        if end_ms <= start_ms:
            raise InvalidServiceRequest(f"{member}.end must be after {member}.start")
    duration = data.get("duration")
    if duration is not None:
        if isinstance(duration, bool) or not isinstance(duration, int | float) or duration <= 0:
            raise InvalidServiceRequest(f"{member}.duration must be a positive number of seconds")
        duration_ms = round(duration * 1000)
        if end_ms is not None and end_ms - start_ms != duration_ms:
            raise InvalidServiceRequest(
                f"{member}.duration does not match {member}.start and {member}.end"
            )
    elif end_ms is not None:
        duration_ms = end_ms - start_ms
    else:
        raise InvalidServiceRequest(f"{member} needs an end or a duration (seconds)")
    comment = string_field(data, "comment", member, False) or ""
    billable = bool_field(data, "billable", member, True)
    wfh = bool_field(data, "wfh", member, False)

    person = context.person
    if data.get("person") is not None:
        person = await find_in_org(
            request, Person, "persons", data["person"], f"{member}.person", "Person"
        )
    project = None
    if data.get("project") is not None:
        project = await find_in_org(
            request, Project, "projects", data["project"], f"{member}.project", "Project"
        )
    task = None
    if data.get("task") is not None:
        task = await find_in_org(request, Task, "tasks", data["task"], f"{member}.task", "Task")
    absence = None
    if data.get("absence") is not None:
        absence = await find_in_org(
            request, AbsenceType, "absence_types", data["absence"], f"{member}.absence", "Absence"
        )
    xids = request.xids("time_records")
    if xid is not None:
        holder = await xids.holder(xid)
        if holder is not None:
            if await request.session.get(TimeRecord, holder) is not None:
                raise LegacyError(f"The xid {xid!r} is already used by another time entry")
            await xids.release(holder)
    if not await context.can_access_person_data(person.id) and not await may_edit_by_status(
        context, person.id, start_ms
    ):  # an approver without access by role may still edit the timesheet they review
        raise PermissionDenied("you may not log time for this person")
    if task is not None:
        await check_task_allowed(request.session, context.organisation, person, [task])
    await check_owner_access(request.session, context.organisation, person,
                             projects=[project] if project is not None else [],
                             absences=[absence])
    await guard_time_record_change(context, person.id, start_ms)

    record = TimeRecord(
        organisation_id=request.org_id,
        person_id=person.id,
        start_ms=start_ms,
        end_ms=end_ms,
        duration_ms=duration_ms,
        task_id=task.id if task is not None else None,
        absence_id=absence.id if absence is not None else None,
        comment=comment,
        non_billable=not billable,
        wfh=bool(wfh),
        created_ms=context.now_ms,
        modified_ms=context.now_ms,
        modified_by_id=context.person.id,
        projects=[project] if project is not None else [],
    )
    request.session.add(record)
    await request.session.flush()
    if xid is not None:
        try:
            await xids.claim(xid, record.id, context.now_ms)
        except IntegrityError:
            raise LegacyError(f"The xid {xid!r} is already used by another time entry") from None
    await record_time_record_change(context, person.id, start_ms, record.id, "added")
    request.audit(
        "addTimeRecord",
        {
            "personId": person.id,
            "startTime": start_ms,
            "endTime": end_ms,
            "duration": duration_ms,
            "projectIds": [project.id] if project is not None else None,
            "taskId": task.id if task is not None else None,
            "absenceId": absence.id if absence is not None else None,
            "comment": comment,
            "nonBillable": not billable,
            "wfh": wfh,
            "xid": xid,
            "legacyService": "time_entry.create",
        },
        record.id,
    )
    return {"xid": xid} if xid is not None else {"id": record.id}


async def time_entry_dict(request: LegacyRequest, record: TimeRecord) -> dict[str, Any]:
    zone = request.timezone
    project = None
    if record.projects:
        project = sorted(record.projects, key=lambda p: (-p.level, p.name, p.id))[0]
    return {
        **(await request.xids("time_records").ref(record.id) or {}),
        "person": await request.xids("persons").ref(record.person_id),
        "project": await request.xids("projects").ref(project.id if project else None),
        "task": await request.xids("tasks").ref(record.task_id),
        "absence": await request.xids("absence_types").ref(record.absence_id),
        "start": format_datetime(record.start_ms, zone),
        "end": format_datetime(
            record.end_ms if record.end_ms is not None else record.start_ms + record.duration_ms,
            zone,
        ),
        "duration": seconds(record.duration_ms),
        "comment": record.comment,
        "billable": not record.non_billable,
        "wfh": record.wfh,
    }


@service("time_entry.list")
async def time_entry_list(request: LegacyRequest) -> dict[str, Any]:
    member = "time_entry"
    data = request.member(member)
    zone = request.timezone
    statement = select(TimeRecord).where(TimeRecord.organisation_id == request.org_id)
    if data.get("from") is not None:
        statement = statement.where(
            TimeRecord.start_ms >= parse_datetime(data["from"], f"{member}.from", zone)
        )
    if data.get("to") is not None:
        statement = statement.where(
            TimeRecord.start_ms < parse_datetime(data["to"], f"{member}.to", zone)
        )
    if data.get("person") is not None:
        person = await find_in_org(
            request, Person, "persons", data["person"], f"{member}.person", "Person"
        )
        statement = statement.where(TimeRecord.person_id == person.id)
    if data.get("project") is not None:
        project = await find_in_org(
            request, Project, "projects", data["project"], f"{member}.project", "Project"
        )
        tree = await project_tree(request)
        project_ids = [project.id, *tree.descendants(project.id)]
        statement = statement.where(
            TimeRecord.id.in_(
                select(time_record_projects.c.time_record_id).where(
                    time_record_projects.c.project_id.in_(project_ids)
                )
            )
        )
    visible = await request.context.visible_person_ids()
    if visible is not None:
        statement = statement.where(TimeRecord.person_id.in_(visible))
    rows = await request.session.scalars(statement.order_by(TimeRecord.start_ms, TimeRecord.id))
    return {"time_entries": [await time_entry_dict(request, r) for r in rows.unique()]}


__all__ = ["SERVICES", "LegacyNotFound", "LegacyRequest", "dispatch"]
