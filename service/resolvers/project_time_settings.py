"""A project's own time settings for work schedules (`editProjectTimeSettings…`, admins and
the project's managers) and `SvcProject.timeSettings`. A project's explicit value wins over
the owner's for entries on the project (`service/schedule_plan.py`)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType

from service import permissions
from service.approvals import settings as cfg
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Project

require_permission = permissions.requirer(permissions.PROJECTS)

mutation = MutationType()
project_type = ObjectType("SvcProject")


def _bind(key: str) -> None:
    async def resolver(_root: Any, info: Any, id: str, **kwargs: Any) -> Project:
        context: RequestContext = info.context
        require_permission(context, "change a project's timesheet settings")
        project = await get_in_org(context.session, Project, context.org_id, id, "id", "project")
        cfg.set_value(project, key, kwargs.get(key))
        return project

    mutation.set_field(f"editProjectTimeSettings{key[0].upper()}{key[1:]}", resolver)


for _key in cfg.SCHEDULE_SETTINGS:
    _bind(_key)


@project_type.field("timeSettings")
def resolve_project_time_settings(project: Project, _info: Any) -> dict[str, Any]:
    return cfg.time_settings(lambda key: cfg.as_attribute(cfg.own(project, "projects", key)))


BINDABLES = [mutation, project_type]
