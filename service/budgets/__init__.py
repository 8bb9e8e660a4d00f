"""Budgets of projects and tasks: the table (`models`), their split rows and alerts (`alerts`),
what the resolvers share (`store`), the resolvers (getProjectBudgetData, a report over them,
is service/reports/budget_data.py)."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.budgets.alerts import check_budget_alerts

__all__ = [
    "check_budget_alerts",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
