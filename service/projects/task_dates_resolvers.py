"""editTaskStartTime / editTaskEndTime: one end of a task's planned period each (null clears
it), from one table; the period stays ordered (`editTaskPeriod` edits both at once)."""

from __future__ import annotations

from typing import Any

from ariadne import MutationType

from service.access import TASKS, requirer
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import by_id
from service.models import Task
from service.plannings import check_end_unlocked

require_permission = requirer(TASKS)

mutation = MutationType()

# operation -> (its argument, the column it sets)
ENDS = {"editTaskStartTime": ("startTime", "start_ms"),
        "editTaskEndTime": ("endTime", "end_ms")}


def _bind(operation: str, argument: str, column: str) -> None:
    async def resolve(_root: Any, info: Any, id: str, **kwargs: Any) -> Task:
        context: RequestContext = info.context
        require_permission(context)
        task = await by_id(context, Task, id)
        value = kwargs.get(argument)
        start = value if column == "start_ms" else task.start_ms
        end = value if column == "end_ms" else task.end_ms
        if start is not None and end is not None and end < start:
            raise BadInput(argument, "the task's end would be before its start")
        await check_end_unlocked(context, task, end)
        setattr(task, column, value)
        return task

    mutation.set_field(operation, resolve)


for _operation, (_argument, _column) in ENDS.items():
    _bind(_operation, _argument, _column)


BINDABLES = [mutation]
