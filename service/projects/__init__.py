"""Projects and their tasks: the project tree, categories and managers (`models`, `lookup`),
tasks with their categories, statuses, owners, relations and recurrence
(`task_models`, `task_statuses`, `recurrence_rules`, ...), and their resolvers."""
