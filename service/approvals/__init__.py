"""The timesheet approval workflow.

Pure rules, no I/O: `stages` (stage configuration, approver resolution, quorum), `edit_rights`
(who may edit a timesheet in which status), `changes` (what changed between two submissions and
whose approvals carry over). Adapters that read and write the database: `settings` (the
cascading account / tag / person settings), `workflow` (submit, approve, reject, restart, and
the approvalEventUpdate webhook events), `journal` (workflow entries in the Journal),
`reminders` and `autosubmit` (timed work run by the webhook worker), `filters` (the approval
status of time records in SQL). See docs/approvals.md.
"""
