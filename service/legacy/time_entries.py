"""The services on time entries (time records): time_entry.create, time_entry.list."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from service.access import check_owner_access
from service.errors import PermissionDenied
from service.legacy.errors import InvalidServiceRequest, LegacyError
from service.legacy.lookups import find_in_org, project_tree
from service.legacy.request import Handler, LegacyRequest
from service.legacy.values import (
    bool_field,
    format_datetime,
    parse_datetime,
    seconds,
    string_field,
)
from service.legacy.xids import validate_xid
from service.models import AbsenceType, Person, Project, Task, TimeRecord, time_record_projects
from service.time_records import Entry, Write, checked, project_facts
from service.timesheets import (
    guard_time_record_change,
    may_edit_by_status,
    record_time_record_change,
)


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
    projects = [project] if project is not None else []
    await check_owner_access(request.session, context.organisation, person,
                             projects=projects, absences=[absence])
    # the same entry rules as addTimeRecord (service/time_records/entry_rules.py)
    entry = await checked(
        request.session, context.organisation, person, projects,
        Write("legacy", Entry(start_ms, duration_ms, end_ms, absence is not None, comment,
                              task.category_id if task is not None else None,
                              task is not None, project_facts(projects))),
        now_ms=context.now_ms, admin=context.is_admin)
    end_ms, duration_ms = entry.end_ms, entry.duration_ms
    await guard_time_record_change(context, person.id, start_ms,
                                   absence.id if absence is not None else None)

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
        projects=projects,
    )
    request.session.add(record)
    await request.session.flush()
    if xid is not None:
        try:
            await xids.claim(xid, record.id, context.now_ms)
        except IntegrityError:
            raise LegacyError(f"The xid {xid!r} is already used by another time entry") from None
    await record_time_record_change(context, person.id, start_ms, record.id, "added",
                                    record.absence_id)
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


SERVICES: dict[str, Handler] = {
    "time_entry.create": time_entry_create,
    "time_entry.list": time_entry_list,
}
