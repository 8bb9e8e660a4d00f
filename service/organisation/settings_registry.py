"""The account settings as one table: every time setting and localisation field, with its
name, GraphQL types, the levels it is set at, its default, its validation and who edits it.

Everything else follows from a row: the `edit<Level><Group><Name>` mutations and the
`timeSettings` / `localisation` attributes (`service/organisation/settings_sdl.py` writes their SDL,
`service/organisation/settings_resolvers.py` binds them), the cascade
(`service/organisation/settings_cascade.py`) and
the audit entry (written by the executor for every mutation). Adding a setting is one row.

A row's `check` is pure: it returns the value to store or raises `ValueError(problem)`, which
the binder reports as `BadInput(<the row's argument>, problem)`. `None` always clears the
level's value (the next level then applies), except at the levels listed in `required`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from plumbing import mail_templates
from service.value_words import choice_problem

TIME_SETTINGS = "TimeSettings"
LOCALISATION = "Localisation"
EMAIL_TEMPLATE = "EmailTemplate"
NOTIFICATIONS = "NotificationSettings"
# The levels, most general first; a person's value: person, then their tags, then the account.
LEVELS = ("organisation", "tag", "person", "project")
ACCOUNT = ("organisation", "tag", "person")
# GraphQL attribute of each group on the entity types.
ATTRIBUTES = {TIME_SETTINGS: "timeSettings", LOCALISATION: "localisation",
              EMAIL_TEMPLATE: "emailTemplates", NOTIFICATIONS: "notificationSettings"}
# Groups of one setting that is the entity's attribute itself (`notificationSettings:
# Attribute<Level>NotificationSettings`), not a field of a group type.
DIRECT = (NOTIFICATIONS,)

# A reference the value makes to another entity: (argument path, kind, id).
Reference = tuple[str, str, str]


@dataclass(frozen=True)
class Setting:
    name: str
    group: str
    argument: str  # the mutation argument's GraphQL type
    value: str  # the attribute's `value` GraphQL type
    check: Callable[[Any], Any]
    description: str
    levels: tuple[str, ...] = LEVELS
    default: Any = None
    # Who may edit: administrators, and at person level the person too when `self_edit`.
    self_edit: bool = False
    # Levels whose value lives in an entity column rather than the settings JSON.
    columns: Mapping[str, str] = field(default_factory=dict)
    # Levels where the value cannot be cleared.
    required: tuple[str, ...] = ()
    # The ids the value names (checked to exist in the organisation before writing).
    references: Callable[[Any], Iterable[Reference]] | None = None
    # How the values of several tags at the deepest level combine (None: the first by name).
    ties: Callable[[list[Any]], Any] | None = None
    # The mutation's argument (default: the name), its name and the attribute type's
    # ({Level}, {group}, {Name} filled in), and the key of the value in `settings` JSON.
    arg: str = ""
    mutation_format: str = "edit{Level}{group}{Name}"
    attribute_format: str = "Attribute{group}{Name}"
    stored_as: str = ""

    @property
    def capitalised(self) -> str:
        return self.name[0].upper() + self.name[1:]

    @property
    def argument_name(self) -> str:
        return self.arg or self.name

    @property
    def key(self) -> str:
        return self.stored_as or self.name

    def _named(self, form: str, level: str) -> str:
        return form.format(Level=level.capitalize(), group=self.group, Name=self.capitalised)

    def mutation(self, level: str) -> str:
        return self._named(self.mutation_format, level)

    def attribute_type_at(self, level: str) -> str:
        return self._named(self.attribute_format, level)

    @property
    def attribute_type(self) -> str:
        return self.attribute_type_at("organisation")


# --- the rules (pure) ---------------------------------------------------------------------


def as_parsed(value: Any) -> Any:
    """The GraphQL type has checked it already (Boolean, SvcTimestamp, SvcCurrency …)."""
    return value


def whole(low: int, high: int, problem: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(problem)
        return value

    return check


def one_of(*allowed: Any) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not any(type(value) is type(a) and value == a for a in allowed):  # True is not 1
            raise ValueError(choice_problem(allowed, value))
        return value

    return check


def time_zone(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be an IANA time zone name")
    try:
        ZoneInfo(value.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {value!r}") from None
    return value.strip()


def id_list(value: Any) -> list[str]:
    """Ids in order, once each (a null is refused by the reference check, naming its index)."""
    return list(dict.fromkeys(value))


def union(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(item for value in values for item in value))


def id_lists(value: Any) -> list[list[str]]:
    if any(item is None for item in value):
        raise ValueError("must be a list of lists of ids without null lists")
    return [id_list(item) for item in value]


def timesheet_reminder(value: Any) -> dict[str, Any]:
    timing, hour = value.get("timing"), value.get("hour")
    one_of("nextStart", "currentEnd")(timing)
    whole(0, 23, "hour must be an hour of the day from 0 to 23")(hour)
    return {"timing": timing, "hour": hour}


def auto_timesheet(value: Any) -> list[dict[str, Any]]:
    if any(entry is None for entry in value):
        raise ValueError("must be a list of entries without nulls")
    keys = ("categoryId", "timesheetStartStatusId", "timesheetEndStatusId")
    return [{key: entry.get(key) for key in keys} for entry in value]


def _listed(kind: str) -> Callable[[Any], Iterable[Reference]]:
    def refs(value: Any) -> Iterable[Reference]:
        return ((f"[{i}]", kind, v) for i, v in enumerate(value))

    return refs


def _nested(value: Any) -> Iterable[Reference]:
    return ((f"[{i}][{j}]", "projectCategory", v)
            for i, row in enumerate(value) for j, v in enumerate(row))


def _auto_refs(value: Any) -> Iterable[Reference]:
    for i, entry in enumerate(value):
        yield f"[{i}].categoryId", "taskCategory", entry["categoryId"]
        for key in ("timesheetStartStatusId", "timesheetEndStatusId"):
            if entry.get(key) is not None:
                yield f"[{i}].{key}", "taskStatus", entry[key]


DAY_MS = 86_400_000
_DURATION = whole(0, DAY_MS, "must be a duration in milliseconds from 0 to 86400000 (a day)")


def _time(name: str, argument: str, check: Callable[[Any], Any], description: str,
          value: str | None = None, **extra: Any) -> Setting:
    return Setting(name, TIME_SETTINGS, argument, value or argument, check, description, **extra)


def _flag(name: str, description: str, default: bool | None = False, **extra: Any) -> Setting:
    return _time(name, "Boolean", as_parsed, description, default=default, **extra)


def _local(name: str, argument: str, check: Callable[[Any], Any], description: str,
           **extra: Any) -> Setting:
    return Setting(name, LOCALISATION, argument, argument, check, description, levels=ACCOUNT,
                   self_edit=True, **extra)


def email_template(kind: str) -> Callable[[Any], Any]:
    """A template of that kind parses and renders with its sample values in the sandbox."""

    def check(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError("must be a template, not blank (null clears it)")
        try:
            mail_templates.check(kind, value)
        except mail_templates.TemplateProblem as problem:
            raise ValueError(f"the template does not render: {problem}") from None
        return str(value)

    return check


FREQUENCIES = ("none", "instant", "daily", "weekly")
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CATEGORIES = ("mentions", "managedEntityMentions", "assignedEntityMentions", "approvalUpdate",
              "budgetAlert")
NOTIFICATIONS_DEFAULT = {"email": True, "push": True,
                         **{category: {"frequency": "instant"} for category in CATEGORIES}}


def _category(name: str, value: Any) -> dict[str, Any]:
    frequency = value.get("frequency")
    if frequency not in FREQUENCIES:
        raise ValueError(f"{name}.frequency {choice_problem(FREQUENCIES, frequency)}")
    stored: dict[str, Any] = {"frequency": frequency}
    if value.get("hour") is not None:
        stored["hour"] = whole(0, 23, f"{name}.hour must be from 0 to 23")(value["hour"])
    if value.get("dayOfWeek") is not None:
        stored["dayOfWeek"] = one_of(*DAYS)(value["dayOfWeek"])
    if value.get("threshold") is not None:
        stored["threshold"] = whole(0, 1_000_000, f"{name}.threshold must be from 0 to "
                                    "1000000")(value["threshold"])
    for flag in ("atRisk", "overBudget"):
        if value.get(flag) is not None:
            stored[flag] = bool(value[flag])
    return stored


def notification_settings(value: Any) -> dict[str, Any]:
    stored: dict[str, Any] = {flag: value.get(flag) for flag in ("email", "push")
                              if value.get(flag) is not None}
    for category in CATEGORIES:
        stored[category] = _category(category, value[category])
    return {**NOTIFICATIONS_DEFAULT, **stored}


def _template(kind: str, description: str) -> Setting:
    return Setting(kind, EMAIL_TEMPLATE, "String", "String", email_template(kind), description,
                   levels=ACCOUNT, arg="template", stored_as=f"emailTemplate.{kind}",
                   attribute_format="AttributeEmailTemplates{Name}")


# --- the table ---------------------------------------------------------------------------

SETTINGS: tuple[Setting, ...] = (
    _time("listOfProjectCategories", "[[SvcId]]", id_lists,
          "Project categories offered when recording time, one list per level of choice.",
          value="[[SvcProjectCategory]]", references=_nested),
    _time("taskCategories", "[SvcId]", id_list, "Record time on these plannings: the task "
          "categories whose tasks the person may record time on (unset everywhere: all; "
          "several deepest tags: their lists together).",
          value="[SvcTaskCategory]", references=_listed("taskCategory"), ties=union),
    _time("periodicity", "SvcPeriodicity",
          one_of("daily", "weekly", "biWeekly", "semiMonthly", "monthly"),
          "The timesheet period: daily, weekly, biWeekly, semiMonthly or monthly.",
          default="weekly"),
    _flag("allowTimeRecordOutOfScheduleDaily", "false: a time record on a day the person's "
          "schedule has no time (or a public holiday) is refused.", default=None),
    _flag("allowTimeRecordOutOfSchedulePeriod", "false: time beyond the period's scheduled "
          "time is refused.", default=None),
    _flag("requireScheduledTimeDaily", "Each working day needs its scheduled time.",
          default=None),
    _flag("requireScheduledTimePeriod", "The period needs its scheduled time.", default=None),
    _flag("allowTimeOffRecord", "Time off may be recorded on the timesheet.", default=True),
    _time("timeEntryUnit", "Int", _DURATION, "Durations are rounded to this many ms (0: none).",
          default=0),
    _flag("allowPartialPeriodSubmit", "A part of a period may be submitted."),
    _time("turnOffPeriodAfter", "Int", whole(0, 3650, "must be a number of days from 0 to 3650"),
          "Periods ended this many days ago take no more time (null: never)."),
    _time("minimumTimeEntry", "Int", _DURATION, "The shortest duration accepted, in ms.",
          default=0),
    _time("durationFormat", "Int", one_of(0, 1, 2),
          "How durations are shown: 0 h:mm, 1 decimal hours, 2 XhYm.", default=0),
    _flag("ownerOrAdminOnly", "Only the owner or an admin can edit entries (no approver "
          "editing).", default=None),
    _flag("noFutureTimeRecord", "Time may not be recorded in the future."),
    _flag("forceComment", "A time record needs a comment."),
    _flag("timeRecordOnWorkingDayOnly", "Time only on the person's working days."),
    _flag("absenceMaxOneDay", "An absence covers at most one day."),
    _time("lockDate", "SvcTimestamp", as_parsed, "Nothing before this time may be recorded or "
          "changed (null: no lock).", value="SvcTime"),
    _flag("enableTimer", "The timer is offered.", default=True),
    _flag("enableStartEndTime", "Start and end times are offered.", default=True),
    _flag("mandatoryTimer", "Time is recorded with the timer only."),
    _flag("mandatoryStartEndTime", "A time record needs its start and end time."),
    _time("timesheetReminder", "SvcTimesheetReminderInput", timesheet_reminder,
          "When people are reminded of their timesheet (timing, hour of the day).",
          value="SvcTimesheetReminder"),
    _time("approvalReminder", "Int",
          whole(0, 365, "must be a number of days from 0 (off) to 365"),
          "Remind approvers after this many days if not yet approved."),
    _flag("enableAutoTimesheet", "Timesheets are filled from the task board."),
    _time("autoTimesheet", "[SvcAutoTimesheetEntryInput]", auto_timesheet,
          "Which task categories and statuses fill the timesheet.",
          value="[SvcAutoTimesheetEntry]", references=_auto_refs),
    _flag("onlyAdminEditsOthers", "Only an admin can edit someone else's timesheet "
          "(extension).", default=None, levels=ACCOUNT),
    _time("autoSubmit", "Int", whole(0, 365, "must be a number of days from 0 to 365 (null: off)"),
          "Submit a period (the person's periodicity, in their time zone) holding entries this "
          "many days after it ends (extension).", levels=ACCOUNT),
    _time("approvalEscalationDelay", "Int", whole(0, 30, "must be a number of working days "
          "from 0 to 30 (null or 0: 1)"), "Ask the administrators this many working days "
          "after a stage began to wait for an away approver (extension).", levels=ACCOUNT),
    _local("currency", "SvcCurrency", as_parsed,
           "The currency amounts are shown in.", columns={"organisation": "currency",
                                                            "person": "currency"},
           required=("organisation",)),
    _local("dateFormat", "SvcDateFormat",
           one_of("YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY", "DD.MM.YYYY", "DD-MM-YYYY"),
           "How dates are shown: YYYY-MM-DD, DD/MM/YYYY, MM/DD/YYYY, DD.MM.YYYY or DD-MM-YYYY.",
           default="YYYY-MM-DD"),
    _local("decimalFormat", "SvcDecimalFormat", one_of(".", ","),
           "The decimal separator: . or ,", default="."),
    _local("thousandSeparator", "SvcThousandSeparator", one_of(",", ".", " ", "'", ""),
           "The thousands separator: , . space ' or none (empty).", default=","),
    _local("firstDayOfWeek", "SvcFirstDayOfWeek", one_of(0, 1, 2, 3, 4, 5, 6),
           "The first day of the week: 0 Sunday, 1 Monday … 6 Saturday.", default=1),
    _local("timeFormat", "SvcTimeFormat", one_of(12, 24), "The clock: 12 or 24 hours.",
           default=24),
    _local("timeZone", "SvcTimeZone", time_zone, "An IANA time zone name, e.g. Europe/Berlin.",
           columns={"organisation": "timezone", "person": "timezone"},
           required=("organisation",)),
    Setting("notificationSettings", NOTIFICATIONS, "SvcNotificationSettingsInput",
            "SvcNotificationSettings!", notification_settings,
            "Which mails and messages a person gets: email and push (Slack) on or off, and per "
            "category how often (none, instant, daily, weekly).", levels=ACCOUNT,
            default=NOTIFICATIONS_DEFAULT, self_edit=True, arg="notification",
            mutation_format="edit{Level}NotificationSettings",
            attribute_format="Attribute{Level}NotificationSettings"),
    _template("signup", "The mail that confirms a sign-up."),
    _template("signin", "The mail with a sign-in code and link."),
    _template("invite", "The mail that invites a person."),
    _template("mention", "The mail telling a person they were mentioned in the Journal."),
    _template("timesheetSubmitted", "The mail asking an approver to review a timesheet."),
    _template("reminder", "The mail reminding a person to submit their timesheet."),
    _template("digest", "The daily digest of timesheets waiting for an approver."),
    _template("approvalReminder", "The mail reminding an approver of a timesheet waiting."),
    _template("report", "The mail that sends a report."),
)

BY_NAME = {(s.group, s.name): s for s in SETTINGS}


def in_group(group: str) -> tuple[Setting, ...]:
    return tuple(s for s in SETTINGS if s.group == group)


def groups_at(level: str) -> list[str]:
    """The groups with at least one setting at the level (each gives the entity an attribute)."""
    return [g for g in ATTRIBUTES if any(level in s.levels for s in in_group(g))]
