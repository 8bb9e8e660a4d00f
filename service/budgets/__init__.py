"""Budgets of projects and tasks: the table (`models`), their split rows and alerts (`alerts`),
getProjectBudgetData's work (`data`), what the resolvers share (`store`), the resolvers."""
