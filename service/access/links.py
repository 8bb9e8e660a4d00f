"""The links of the access model as one table (`LINKS`): each row is a pair of assign /
unassign mutations between a member (a person, a tag, a project, a task, a time record) and
an item, the model that stores it, the keys of its SvcRawRelation, and optionally its
reset<Member><Items>Relations. service/access/access_resolvers.py binds the mutations from it,
service/access/link_reads_resolvers.py the reads (`relations.<key>`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.access import permissions
from service.access.models import (
    AbsenceTypeAccess,
    ExpenseTypeAccess,
    ExpenseTypeProject,
    ProjectAccess,
)
from service.models import (
    AbsenceType,
    CustomField,
    CustomFieldLink,
    ExpenseType,
    Person,
    Project,
    ProjectSubProject,
    ScheduleType,
    ScheduleTypeAccess,
    Tag,
    Task,
    TaskTagAccess,
    TimeRecord,
)


@dataclass(frozen=True)
class Link:
    """One pair of assign / unassign mutations."""

    assign: str
    unassign: str
    member_argument: str  # personId | tagId | projectId | taskId | timerecordId
    # projectId | subProjectId | absenceTypeId | expenseTypeId | scheduleTypeId | tagId |
    # customFieldId
    item_argument: str
    row_model: Any
    item_model: Any
    item_column: str
    item_label: str
    source_key: str  # the member's relation ("projects", "absenceTypes", ...)
    target_key: str  # the item's relation ("projectsOfPerson", ...)
    reset: str | None = None  # reset<Member><Items>Relations (custom fields: elsewhere)
    # The permission that edits the link (None: the item kind's, see _ITEM_PERMISSIONS).
    permission: str | None = None
    # Read back as <member>.relations.<source_key> and <item>.relations.<target_key>.
    readable: bool = False


def _links() -> list[Link]:
    links = []
    for who, argument in (("Person", "personId"), ("Tag", "tagId")):
        links += [
            Link(f"assignProjectTo{who}", f"unassignProjectFrom{who}", argument, "projectId",
                 ProjectAccess, Project, "project_id", "project", "projects",
                 f"projectsOf{who}", f"reset{who}ProjectsRelations"),
            Link(f"assignSubProjectTo{who}", f"unassignSubProjectFrom{who}", argument,
                 "subProjectId", ProjectAccess, Project, "project_id", "subproject",
                 "subProjects", f"subProjectsOf{who}", f"reset{who}SubProjectsRelations"),
            Link(f"assignAbsenceTypeTo{who}", f"unassignAbsenceTypeFrom{who}", argument,
                 "absenceTypeId", AbsenceTypeAccess, AbsenceType, "absence_type_id",
                 "absence type", "absenceTypes", f"absenceTypesOf{who}",
                 f"reset{who}AbsenceTypesRelations"),
            Link(f"assignExpenseTypeTo{who}", f"unassignExpenseTypeFrom{who}", argument,
                 "expenseTypeId", ExpenseTypeAccess, ExpenseType, "expense_type_id",
                 "expense type", "expenseTypes", f"expenseTypesOf{who}",
                 f"reset{who}ExpenseTypesRelations"),
            Link(f"assignScheduleTypeTo{who}", f"unassignScheduleTypeFrom{who}", argument,
                 "scheduleTypeId", ScheduleTypeAccess, ScheduleType, "schedule_type_id",
                 "schedule type", "scheduleTypes", f"scheduleTypesOf{who}",
                 f"reset{who}ScheduleTypesRelations", readable=True),
        ]
    links.append(
        Link("assignExpenseTypeToProject", "unassignExpenseTypeFromProject", "projectId",
             "expenseTypeId", ExpenseTypeProject, ExpenseType, "expense_type_id",
             "expense type", "expenseTypes", "expenseTypesOfProject",
             "resetProjectExpenseTypesRelations")
    )
    links += [
        Link("assignSubProjectToProject", "unassignSubProjectFromProject", "projectId",
             "subProjectId", ProjectSubProject, Project, "sub_project_id", "subproject",
             "subProjects", "subProjectsOfProject", "resetProjectSubProjectsRelations",
             readable=True),
        Link("assignTaskToTag", "unassignTaskFromTag", "taskId", "tagId", TaskTagAccess, Tag,
             "tag_id", "tag", "tags", "tagsOfTask", "resetTaskTagsRelations",
             permission=permissions.TASKS, readable=True),
    ]
    for who, argument in (("Tag", "tagId"), ("Person", "personId"), ("Project", "projectId"),
                          ("Task", "taskId"), ("TimeRecord", "timerecordId")):
        links.append(Link(f"assignCustomFieldTo{who}", f"unassignCustomFieldFrom{who}",
                          argument, "customFieldId", CustomFieldLink, CustomField,
                          "custom_field_id", "custom field", "customFields",
                          f"customFieldsOf{who}"))
    return links


LINKS: tuple[Link, ...] = tuple(_links())

MEMBER_MODELS: dict[str, tuple[Any, str]] = {
    "personId": (Person, "person"),
    "tagId": (Tag, "tag"),
    "projectId": (Project, "project"),
    "taskId": (Task, "task"),
    "timerecordId": (TimeRecord, "time record"),
}
MEMBER_COLUMNS = {"personId": "person_id", "tagId": "tag_id", "projectId": "project_id",
                  "taskId": "task_id", "timerecordId": "time_record_id"}


def relation(row_id: str, value: Any, start_ms: int | None = None) -> dict[str, Any]:
    """One Svc<Kind>Relation as read from an item's `relations` (the fields of every
    variant)."""
    return {"relationId": row_id, "value": value, "startTime": start_ms,
            "operation": "assign", "path": []}
