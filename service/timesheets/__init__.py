"""The timesheet approval workflow.

Pure rules, no I/O: `stages` (stage configuration, approver resolution, quorum), `edit_rights`
(who may edit a timesheet in which status), `changes` (what changed between two submissions and
whose approvals carry over). Adapters that read and write the database: `journal` (workflow
entries in the Journal), `reminders` and `autosubmit` (timed work run by the webhook worker),
`filters` (the approval status of time records in SQL). The workflow itself, low to high:
`actor` (who acts, labels);
`content` (a timesheet's content and the stages it needs), `locks` (row locks per dialect),
`state` (reading the current state), `records` (writing events and approvals); `notify` (the
approvalEventUpdate webhook events); `progress` (moving through the stages); `submit`,
`decide` (approve, reject) and `restart` (after an approver's edit). See docs/approvals.md.
"""
