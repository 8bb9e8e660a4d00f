"""The demo organisation as `timebot demo export` prints it: the organisation, its people
(with their API keys and legacy tokens, issued on first need), projects, tasks, absence and
expense types. The shape is fixed by the outside contract."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from service.demo import find_demo_organisation
from service.models import AbsenceType, ExpenseType, Person, Project, Task
from service.organisation.provisioning import ensure_api_key
from service.people.models import ROLE_ADMIN, ROLE_EMPLOYEE, ROLE_MANAGER


async def export_demo(session: AsyncSession) -> dict[str, Any]:
    """The demo organisation as `timebot demo export` prints it (keys issued on first need)."""
    organisation = await find_demo_organisation(session)
    if organisation is None:
        raise LookupError("the demo organisation has not been seeded")
    org_id = organisation.id
    now_ms = organisation.created_ms

    persons = list(
        await session.scalars(
            # Archived people are not the demo's: timebot's own integration person is one.
            select(Person)
            .where(Person.organisation_id == org_id, Person.archived.is_(False))
            .order_by(Person.created_ms, Person.name, Person.id)
        )
    )
    role_order = {ROLE_ADMIN: 0, ROLE_MANAGER: 1, ROLE_EMPLOYEE: 2}
    persons.sort(key=lambda person: (role_order.get(person.role.kind, 3), person.name))
    exported_persons = []
    for person in persons:
        exported_persons.append(
            {
                "id": person.id,
                "name": person.name,
                "email": person.email,
                "role": person.role.kind,
                "apikey": await ensure_api_key(session, person, now_ms),
                "legacyToken": await _legacy_token(session, person, now_ms),
            }
        )

    projects = list(
        await session.scalars(
            select(Project).where(Project.organisation_id == org_id).order_by(
                Project.level, Project.name, Project.id
            )
        )
    )
    tasks = list(
        await session.scalars(
            select(Task).where(Task.organisation_id == org_id).order_by(Task.position, Task.id)
        )
    )
    absence_types = list(
        await session.scalars(
            select(AbsenceType).where(AbsenceType.organisation_id == org_id).order_by(
                AbsenceType.name, AbsenceType.id
            )
        )
    )
    expense_types = list(
        await session.scalars(
            select(ExpenseType).where(ExpenseType.organisation_id == org_id).order_by(
                ExpenseType.name, ExpenseType.id
            )
        )
    )
    return {
        "organisation": {
            "id": organisation.id,
            "name": organisation.name,
            "timezone": organisation.timezone,
            "currency": organisation.currency,
        },
        "persons": exported_persons,
        "projects": [
            {
                "id": project.id,
                "name": project.name,
                "parentId": project.parent_id,
                "category": project.category.name if project.category else None,
                "level": project.level,
            }
            for project in projects
        ],
        "tasks": [
            {
                "id": task.id,
                "name": task.name,
                "projectId": task.project_id,
                "status": task.status.name if task.status else None,
            }
            for task in tasks
        ],
        "absenceTypes": [
            {"id": item.id, "name": item.name, "unit": item.unit} for item in absence_types
        ],
        "expenseTypes": [{"id": item.id, "name": item.name} for item in expense_types],
    }


async def _legacy_token(session: AsyncSession, person: Person, now_ms: int) -> str | None:
    try:
        from service.legacy.tokens import ensure_legacy_token
    except ImportError:  # the legacy interface is not part of this build
        return None
    return await ensure_legacy_token(session, person, now_ms)
