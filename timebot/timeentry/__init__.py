"""Quick time entry (issue 6), shared by Slack (`/time`, `/timesheet`) and mail (time@).

- `plan` — pure: the catalogue of what a person may log on (projects, tasks with their paths,
  absence types), `plan_entry` (what to create from a parsed entry, or why not: unknown or
  ambiguous target, with the candidates), day amounts at 8h a working day, `plain_words`
  for what the service refused;
- `texts` — pure: weeks (Monday to Monday in the person's zone), numbered lists, the week
  summary and timesheet status;
- `gateway` — the thin GraphQL adapter, as the person with their own key: the catalogue,
  addTimeRecord then the comment / wfh / nonBillable edits (deleted again if a step fails),
  records, approval state, submitTimesheet;
- `memory` — the bot's database: creations (for undo; a mail's lines by inbox id and line)
  and the list last shown (for edit <n> / delete <n>);
- `actions.QuickTime` — the use cases: log, recent, edit, delete, undo, week, submit, status;
- `rules` — a person's rules of time entry as the fronts know them (read once, forgotten on
  the organisation's events), by which they refuse early.
"""

from timebot.timeentry.actions import LogResult, Outcome, QuickTime, Who
from timebot.timeentry.memory import Memory

__all__ = ["LogResult", "Memory", "Outcome", "QuickTime", "Who"]
