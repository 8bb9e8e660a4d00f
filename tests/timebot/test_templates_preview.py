"""`timebot templates preview|kinds` (the admin's preview of an e-mail template with sample
values, in the sandbox the mails are rendered in) and the notification decision table."""

from __future__ import annotations

from click.testing import CliRunner

from shell.cli import main
from timebot.notify.person_notify import EMAIL, GOVERNED_BY, SLACK, gets

OFF = {"frequency": "none"}


def test_preview_renders_with_sample_values_and_names_the_line_of_a_problem() -> None:
    runner = CliRunner()
    shown = runner.invoke(main, ["templates", "preview", "timesheetSubmitted", "-"],
                          input="Subject: {{ owner }} waits\n\nDear {{ person.name }}: "
                                "{{ period }}\n")
    assert shown.exit_code == 0, shown.output
    assert shown.output == ("Subject: Bob Builder waits\n\n"
                            "Dear Ann Example: Mon 02 Mar to Sun 08 Mar 2026\n")
    for source, problem in (("a\nb\n{{ ''.__class__.__mro__ }}", "line 3: SecurityError"),
                            ("{% for x in %}", "line 1"),
                            ("{{ lipsum() }}", "'lipsum' is undefined")):
        refused = runner.invoke(main, ["templates", "preview", "digest", "-"], input=source)
        assert refused.exit_code == 1 and problem in refused.output, refused.output
    kinds = runner.invoke(main, ["templates", "kinds"])
    assert kinds.output.count("\n") == 9 and "reminder: entries, period" in kinds.output
    assert runner.invoke(main, ["templates", "preview", "nosuch", "-"]).exit_code == 2


def test_who_gets_what() -> None:
    assert all(gets({}, what, channel) for what in GOVERNED_BY for channel in (EMAIL, SLACK))
    no_mail = {"email": False}
    assert not gets(no_mail, "review", EMAIL) and gets(no_mail, "review", SLACK)
    assert not gets(no_mail, "reminder", EMAIL)
    no_updates = {"approvalUpdate": OFF}
    assert not any(gets(no_updates, what, channel) for channel in (EMAIL, SLACK)
                   for what in ("review", "approvalReminder", "ownerNotice", "digest"))
    assert gets(no_updates, "reminder", EMAIL) and gets(no_updates, "journal", SLACK)
    assert not gets({"push": False}, "journal", SLACK)
    assert gets({"approvalUpdate": {"frequency": "weekly"}}, "review", EMAIL)
