"""Task categories and their workflow statuses, below the resolvers: a new category's default
statuses, the default category, a status's colour, and the capacity of a status (how many
active tasks it may hold at once, `maxConcurrentTasks`)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import BadInput, RuleViolation
from service.models import Task, TaskCategory, TaskStatus
from service.structure import oldest_in_org

DEFAULT_CATEGORY_NAME = "Tasks"
DEFAULT_STATUSES = ("To do", "In progress", "Done")


def parse_status_color(value: str) -> int:
    """A status color is an integer: accepts "12", "#ff8800" or "0xff8800"."""
    text = value.strip().lower()
    try:
        if text.startswith("#"):
            return int(text[1:], 16)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text)
    except ValueError:
        raise BadInput("color", f"{value!r} is neither a number nor a #rrggbb color") from None


async def new_category(session: AsyncSession, org_id: str, name: str) -> TaskCategory:
    """A new category with the statuses To do, In progress, Done."""
    category = TaskCategory(organisation_id=org_id, name=name, level_names=[], task_move=None)
    session.add(category)
    await session.flush()
    for position, status_name in enumerate(DEFAULT_STATUSES):
        session.add(TaskStatus(organisation_id=org_id, category_id=category.id,
                               name=status_name, position=position))
    await session.flush()
    return category


async def default_task_category(session: AsyncSession, org_id: str) -> TaskCategory:
    """The category of tasks added without one: the oldest category, created on first need."""
    first: TaskCategory | None = await oldest_in_org(session, TaskCategory, org_id)
    if first is not None:
        return first
    return await new_category(session, org_id, DEFAULT_CATEGORY_NAME)


async def category_statuses(session: AsyncSession, category_id: str) -> list[TaskStatus]:
    """The category's statuses in their board order."""
    rows = await session.scalars(
        select(TaskStatus)
        .where(TaskStatus.category_id == category_id)
        .order_by(TaskStatus.position, TaskStatus.id)
    )
    return list(rows)


async def active_count(session: AsyncSession, status_id: str) -> int:
    """How many unarchived tasks the status holds."""
    count = await session.scalar(
        select(func.count()).select_from(Task).where(
            Task.status_id == status_id, Task.archived.is_(False)
        )
    )
    return int(count or 0)


async def check_capacity(session: AsyncSession, status: TaskStatus, incoming: int) -> None:
    """Refuses when `incoming` more active tasks would exceed the status's limit."""
    limit = status.max_concurrent_tasks
    if limit is None or incoming <= 0:
        return
    # Serialise concurrent moves into the same status (PostgreSQL; SQLite writes are serial).
    await session.execute(
        select(TaskStatus.id).where(TaskStatus.id == status.id).with_for_update()
    )
    current = await active_count(session, status.id)
    if current + incoming > limit:
        raise RuleViolation(
            f'Status "{status.name}" allows at most {limit} concurrent task'
            f"{'s' if limit != 1 else ''} and already holds {current}"
        )


async def next_position(session: AsyncSession, status_id: str) -> int:
    """The position after the last task of the status (a task joining it goes last)."""
    highest = await session.scalar(
        select(func.max(Task.position)).where(Task.status_id == status_id)
    )
    return int(highest) + 1 if highest is not None else 0
