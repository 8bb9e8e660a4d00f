"""Time off: absence types, their accrual and allowances (`models`, `allowances`, `time_off_rules`),
how the approval workflow treats time off (`approval`), and their resolvers."""
