"""Budgets of projects and tasks: the table (`models`), their split rows and alerts (`alerts`),
what the resolvers share (`store`), the resolvers (getProjectBudgetData, a report over them,
is service/reports/budget_data.py)."""
