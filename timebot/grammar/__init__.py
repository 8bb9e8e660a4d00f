"""The quick time entry grammar (issue 6): one pure reading for /time in Slack and for mail.

What an entry may hold, in any order (entries are separated by ; or by lines):

- how long: 2h, 2h30, 2h30m, 2h 30m, 90m, 90min, 1.5h, 1,5h, 1:30, a bare number of hours (at
  most 24), or a range 9:00-11:30, 9-11:30, 9am-1pm, 1-3pm, 13:00-17:00 (hyphen or dash;
  optionally followed by its length in brackets, which must be right), or days: 1d, 0.5d (at
  most 1);
- when (default today): today, yesterday, a weekday name (the most recent, today included),
  last mon (the most recent before today), 2026-03-15, 15.03., 15.03.2026, 16 Mar 2026,
  Mon 16 Mar 2026, Mar 16, optionally after "on"; without a year, the most recent such day;
- what: @project or @project/subproject/task (@"Two words"/task);
- $ or billable, !nb or non-billable; #wfh or wfh;
- the rest: with a project, the comment; without one, the words name the absence type
  (1d vacation friday) and only quoted text (“…”, "…", «…», „…“) is the comment.

Only the first duration, date and project count; a second date or a second bare number is a
word of the comment, a second duration or project is an error, and so is a word starting with a
digit that is none of the above ("2x", "9-", "31.02."), with a hint to quote the comment.

- `parse_entry(text, tz, today)` → a list of `ParsedEntry`, or a `ParseError`;
- `describe(entry)` → the printed-back form, which parses to the same entry;
- `match_target(path, candidates)` / `match_absence(words, absence_types)` → `Match`,
  `Ambiguous` or `NoMatch`.
"""

from timebot.grammar.entry import parse_entry
from timebot.grammar.matching import (
    AbsenceType,
    Ambiguous,
    Candidate,
    Match,
    NoMatch,
    match_absence,
    match_target,
)
from timebot.grammar.model import ParsedEntry, ParseError, ParseResult
from timebot.grammar.render import describe, describe_all

__all__ = [
    "AbsenceType",
    "Ambiguous",
    "Candidate",
    "Match",
    "NoMatch",
    "ParseError",
    "ParseResult",
    "ParsedEntry",
    "describe",
    "describe_all",
    "match_absence",
    "match_target",
    "parse_entry",
]
