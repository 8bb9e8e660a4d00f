"""getProjectBudgetData's work: the budgets of projects with their split rows, the time recorded
on each budget's project and its subprojects (hours, billing and cost, per person: priced as
runInlineReport prices them, over the records the caller may see, through the same filters),
and the forecast: the effort of the tasks planned on the project that are not over yet, priced
at the project's average recorded billing and cost per hour (none recorded: no amounts).

Amounts are in the currency's smallest unit, hours decimal. Budget projects: those named in
`budgetProjectIds`, else every project holding a budget (archived ones with includeArchived).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import or_, select

from service.graphql.context import RequestContext
from service.lookup import get_many_in_org
from service.models import Budget, BudgetSplit, Project, Task
from service.reports.inline_report import check_filters, run_inline_report
from service.structure import parent_map

# Every record ever (the reference has no period argument): 1970 to 2100.
_ALL_TIME = {"target": "custom", "start": 0, "end": 4_102_444_800_000}
MS_PER_HOUR = 3_600_000


def _ancestors(parents: Mapping[str, str | None], project_id: str) -> list[str]:
    found: list[str] = []
    current: str | None = project_id
    while current is not None and current not in found:
        found.append(current)
        current = parents.get(current)
    return found


async def _projects(context: RequestContext, ids: Sequence[str] | None,
                    include_archived: bool) -> list[Project]:
    if ids is not None:
        return await get_many_in_org(context.session, Project, context.org_id, list(ids),
                                     "budgetProjectIds", "project")
    held = select(Budget.project_id).where(Budget.organisation_id == context.org_id)
    statement = select(Project).where(Project.organisation_id == context.org_id,
                                      Project.id.in_(held))
    if not include_archived:
        statement = statement.where(Project.archived.is_(False))
    return list((await context.session.scalars(statement)).unique())


def _entry(budget: Budget, splits: Sequence[BudgetSplit]) -> dict[str, Any]:
    return {
        "budgetId": budget.id, "projectId": budget.project_id,
        "quantity": float(budget.quantity), "billingAmount": float(budget.billing_value),
        "costAmount": float(budget.cost_value), "splitType": budget.split_type,
        "split": [{"entityId": s.entity_id, "quantity": float(s.quantity),
                   "billingAmount": float(s.billing_value), "costAmount": float(s.cost_value)}
                  for s in splits],
    }


def _zero() -> dict[str, float]:
    return {"hours": 0.0, "billing": 0.0, "cost": 0.0}


async def project_budget_data(context: RequestContext, filters: Sequence[Any] | None,
                              include_archived: bool, ids: Sequence[str] | None
                              ) -> dict[str, Any]:
    chain = check_filters(filters or [])
    projects = await _projects(context, ids, include_archived)
    wanted = {p.id for p in projects}
    session = context.session
    budgets = list(await session.scalars(
        select(Budget).where(Budget.organisation_id == context.org_id,
                             Budget.project_id.in_(wanted))
        .order_by(Budget.project_id, Budget.created_ms, Budget.id)))
    splits: dict[str, list[BudgetSplit]] = {}
    for row in await session.scalars(select(BudgetSplit).where(
            BudgetSplit.budget_id.in_([b.id for b in budgets])).order_by(BudgetSplit.id)):
        splits.setdefault(row.budget_id, []).append(row)

    report = await run_inline_report(context, {
        "records": ["time"], "period": _ALL_TIME, "filters": chain,
        "attributes": {"person": True, "projects": True}})
    parents = await parent_map(session, Project, context.org_id)
    totals = {p: _zero() for p in wanted}
    people: dict[str, dict[str, dict[str, float]]] = {p: {} for p in wanted}
    for row in report["rows"]:
        figures = row["quantities"]
        hit: set[str] = set()
        for project in row["entities"]["projects"]:
            hit.update(a for a in _ancestors(parents, project.id) if a in wanted)
        person = row["entities"]["person"]
        for project_id in hit:
            for bucket in (totals[project_id],
                           people[project_id].setdefault(person.id, _zero())):
                bucket["hours"] += figures["hours"]
                bucket["billing"] += figures["hourBilling"]
                bucket["cost"] += figures["hourCost"]

    forecasts = {p: 0.0 for p in wanted}
    tasks = await session.scalars(select(Task).where(
        Task.organisation_id == context.org_id, Task.archived.is_(False),
        Task.project_id.is_not(None), Task.effort.is_not(None),
        or_(Task.end_ms.is_(None), Task.end_ms >= context.now_ms)))
    for task in tasks:
        assert task.project_id is not None and task.effort is not None
        for project_id in _ancestors(parents, task.project_id):
            if project_id in wanted:
                forecasts[project_id] += task.effort / 60

    def priced(project_id: str) -> dict[str, Any]:
        hours, actual = forecasts[project_id], totals[project_id]
        recorded = actual["hours"]
        return {"projectId": project_id, "hours": hours,
                "billing": round(hours * actual["billing"] / recorded, 2) if recorded else 0.0,
                "cost": round(hours * actual["cost"] / recorded, 2) if recorded else 0.0}

    order = [p.id for p in sorted(projects, key=lambda p: (p.name.lower(), p.id))]
    return {
        "budgets": [_entry(b, splits.get(b.id, [])) for b in budgets],
        "actuals": [{"projectId": p, **totals[p],
                     "byPerson": [{"personId": person, **figures} for person, figures
                                  in sorted(people[p].items())]} for p in order],
        "forecasts": [priced(p) for p in order],
    }
