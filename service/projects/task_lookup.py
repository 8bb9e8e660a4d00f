"""The caller's organisation's task, task status or task category by id, refused (NotFound)
naming the argument when it is not one of theirs: shared by the task resolvers."""

from __future__ import annotations

from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Task, TaskCategory, TaskStatus


async def task_by_id(context: RequestContext, task_id: str | None, argument: str = "id") -> Task:
    return await get_in_org(context.session, Task, context.org_id, task_id, argument, "task")


async def status_by_id(
    context: RequestContext, status_id: str, argument: str = "statusId"
) -> TaskStatus:
    return await get_in_org(context.session, TaskStatus, context.org_id, status_id, argument,
                            "task status")


async def category_by_id(
    context: RequestContext, category_id: str, argument: str
) -> TaskCategory:
    return await get_in_org(context.session, TaskCategory, context.org_id, category_id, argument,
                            "task category")
