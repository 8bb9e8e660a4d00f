"""timebot: timesheets from chat and e-mail."""
