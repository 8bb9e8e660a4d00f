"""Reports: runInlineReport (`inline_report` and its `report_*` parts), saved reports and
folders (`models`, `saved`), report links (`links`), the period a report covers
(`period_rules`), and their resolvers."""
