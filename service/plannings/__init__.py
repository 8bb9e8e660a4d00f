"""Planning: work schedules and their timeline (`models`, `schedule_rules`, `schedule_plan`),
public holidays (`holiday_rules`), a task's planning (`task_plan_models`, `task_plans`), the
planned-vs-real and budget reports (`planned_vs_real`), and their resolvers."""
