"""Budget alerts: when the hours recorded against a budget reach the organisation's alert
threshold (notification settings, budgetAlert.threshold, percent of the budget's quantity,
default 80) the budget's threshold alert fires (`thresholdNotifiedAt`); when they reach the
quantity itself, its over-budget alert (`overBudgetNotifiedAt`, unless budgetAlert.overBudget
is false). Each fires once, until `resetBudget…Alert` clears it: the next write of time that
still finds the budget over fires it again.

Checked after every write of time records (service/time_records/writes.py: adds, clones and
edits). The organisation's settings carry a marker from its first budget on, so an
organisation without budgets pays nothing for the check. A project budget counts the time
records on the project and its subprojects, a task budget those on the task; absences do not
count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import func, or_, select

from service.budgets.models import Budget
from service.graphql.context import RequestContext
from service.models import Organisation, Project, TimeRecord, time_record_projects
from service.structure import subtree

MARKER = "hasBudgets"
DEFAULT_THRESHOLD = 80
MS_PER_HOUR = 3_600_000


def mark_budgets(organisation: Organisation) -> None:
    if not (organisation.settings or {}).get(MARKER):
        organisation.settings = {**(organisation.settings or {}), MARKER: True}


def alert_settings(organisation: Organisation) -> tuple[int, bool]:
    """(threshold percent, whether the over-budget alert is on)."""
    notifications: Mapping[str, Any] = (organisation.settings or {}).get(
        "notificationSettings") or {}
    alert: Mapping[str, Any] = notifications.get("budgetAlert") or {}
    threshold = alert.get("threshold")
    return (DEFAULT_THRESHOLD if threshold is None else int(threshold),
            alert.get("overBudget") is not False)


def fired(used_ms: int, quantity_hours: int, threshold_pct: int, over_budget_on: bool,
          threshold_at: int | None, over_at: int | None, now_ms: int
          ) -> tuple[int | None, int | None]:
    """The alerts' new stamps: one not yet fired fires when its level is reached."""
    if quantity_hours <= 0:
        return threshold_at, over_at
    budget_ms = quantity_hours * MS_PER_HOUR
    if threshold_at is None and used_ms * 100 >= budget_ms * threshold_pct:
        threshold_at = now_ms
    if over_budget_on and over_at is None and used_ms >= budget_ms:
        over_at = now_ms
    return threshold_at, over_at


async def used_ms(context: RequestContext, budget: Budget) -> int:
    """Milliseconds of time (not absences) recorded against the budget's project or task."""
    statement = select(func.coalesce(func.sum(TimeRecord.duration_ms), 0)).where(
        TimeRecord.organisation_id == context.org_id, TimeRecord.absence_id.is_(None))
    if budget.task_id is not None:
        statement = statement.where(TimeRecord.task_id == budget.task_id)
    else:
        on_project = select(time_record_projects.c.time_record_id).where(
            time_record_projects.c.project_id.in_(
                subtree(Project, context.org_id, [budget.project_id])))
        statement = statement.where(TimeRecord.id.in_(on_project))
    return int(await context.session.scalar(statement) or 0)


async def _with_ancestors(context: RequestContext, project_ids: set[str]) -> set[str]:
    """The projects and their ancestors (read from the session's identity map when the write
    loaded them, as it does the projects it names and their parents)."""
    found: set[str] = set()
    queue = list(project_ids)
    while queue:
        project_id = queue.pop()
        if project_id in found:
            continue
        found.add(project_id)
        project = await context.session.get(Project, project_id)
        if project is not None and project.parent_id is not None:
            queue.append(project.parent_id)
    return found


async def check_budget_alerts(context: RequestContext, records: Iterable[TimeRecord]) -> None:
    """Fires the alerts that the written records make due (see the module's note)."""
    if not (context.organisation.settings or {}).get(MARKER):
        return
    written = [r for r in records if r.absence_id is None]
    if not written:
        return
    threshold, over_on = alert_settings(context.organisation)
    pending = (or_(Budget.threshold_notified_ms.is_(None),
                   Budget.over_budget_notified_ms.is_(None))
               if over_on else Budget.threshold_notified_ms.is_(None))
    budgets = await context.session.scalars(
        select(Budget).where(Budget.organisation_id == context.org_id, pending))
    task_ids = {r.task_id for r in written if r.task_id}
    project_ids = await _with_ancestors(context, {p.id for r in written for p in r.projects})
    for budget in budgets:
        if budget.task_id not in task_ids and budget.project_id not in project_ids:
            continue
        threshold_at, over_at = fired(
            await used_ms(context, budget), budget.quantity, threshold, over_on,
            budget.threshold_notified_ms, budget.over_budget_notified_ms, context.now_ms)
        budget.threshold_notified_ms, budget.over_budget_notified_ms = threshold_at, over_at
