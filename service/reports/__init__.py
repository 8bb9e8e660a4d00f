"""Reports: runInlineReport (`inline_report` and its `report_*` parts), saved reports and
folders (`models`, `saved`), report links (`links`), getProjectBudgetData (`budget_data`), and
their resolvers (the days a report period covers: service/calendar_periods.py)."""
