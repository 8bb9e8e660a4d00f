"""The kinds of e-mail template (`emailTemplates`) and the sample values of each, apart from
the sandbox (`plumbing.mail_templates`) so that `timebot templates` can name them without
importing Jinja."""

from __future__ import annotations

from typing import Any

# The kinds, as the `emailTemplates` attribute names them, with sample values: a template of
# that kind may read exactly these names (the mail gives the same, with real values).
_PERSON = {"name": "Ann Example", "email": "ann@example.com"}
SAMPLES: dict[str, dict[str, Any]] = {
    "signup": {"person": _PERSON, "organisation": "Example Ltd", "link": "https://example.com/s"},
    "signin": {"person": _PERSON, "organisation": "Example Ltd", "code": "123456",
               "link": "https://example.com/signin", "minutes": 5},
    "invite": {"person": _PERSON, "organisation": "Example Ltd", "inviter": "Grace",
               "link": "https://example.com/i"},
    "mention": {"person": _PERSON, "author": "Grace", "content": "Please check Monday.",
                "link": "https://example.com/j"},
    "timesheetSubmitted": {
        "person": _PERSON, "owner": "Bob Builder", "period": "Mon 02 Mar to Sun 08 Mar 2026",
        "total": "40:00", "stage": 1, "stage_count": 2,
        "approve_url": "https://example.com/a/x", "reject_url": "https://example.com/r/x"},
    "reminder": {"person": _PERSON, "period": "Mon 02 Mar to Sun 08 Mar 2026", "entries": 3,
                 "total": "12:30", "submit_url": "https://example.com/s/x"},
    "digest": {"person": _PERSON, "count": 2, "items": [
        {"owner": "Bob Builder", "period": "Mon 02 Mar to Sun 08 Mar 2026", "total": "40:00"},
        {"owner": "Carol Smith", "period": "Mon 02 Mar to Sun 08 Mar 2026", "total": "38:00"}]},
    "approvalReminder": {
        "person": _PERSON, "owner": "Bob Builder", "period": "Mon 02 Mar to Sun 08 Mar 2026",
        "days": 3, "total": "40:00", "approve_url": "https://example.com/a/x",
        "reject_url": "https://example.com/r/x"},
    "report": {"person": _PERSON, "report": "Hours by project", "link": "https://example.com/r"},
}
KINDS = tuple(SAMPLES)
