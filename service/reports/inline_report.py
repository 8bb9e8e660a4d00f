"""runInlineReport's work: the period's time records the caller may see, each priced with its
resolved billing and cost rate (service/rates/rules.py), summed per person and/or project
(service/rates/rate_amounts.py).

Supported: records time, absence and expense (service/reports/report_expenses.py); the schedule
quantities of service/reports/report_schedule.py; the custom-field accumulators of
service/reports/report_custom_fields.py; the period targets of service/calendar_periods.py and
custom [start, end); grouping by attributes.person / attributes.projects (neither: one row of
totals); filters on persons and projects (a project includes its subprojects), chained by
`following` as the list queries' filters are. The
rest of the reference's parameters are refused by name rather than ignored.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from datetime import datetime, time
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import select

from service.calendar_periods import TARGETS, report_days
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.models import RATE_BILLING, RATE_COST, ExpenseRecord, Person, Project, TimeRecord
from service.rates import (
    Entry,
    PricedEntry,
    Totals,
    day_of,
    load_book,
    may_view_rates,
    organisation_zone,
    project_chain,
    resolve,
    summarise,
)
from service.reports import report_custom_fields as fields
from service.reports import report_expenses as exp
from service.reports import report_schedule as sched
from service.value_words import choice_problem

RECORD_TYPES = ("time", "absence", "expense")
_FILTER_KEYS = ("personId", "notPersonId", "projectId", "notProjectId", "projectIds",
                "notProjectIds", "following")
_MONEY_OPTIONS = ("billing", "dailyBilling", "cost", "dailyCost")
_UNSUPPORTED_ATTRIBUTES = ("periodSplit", "timeRecord", "expenseRecord", "taskRecord")


def _records(records: Sequence[Any]) -> set[str]:
    kinds: set[str] = set()
    for index, kind in enumerate(records):
        if kind not in RECORD_TYPES:
            raise BadInput(f"records[{index}]", choice_problem(RECORD_TYPES, kind))
        kinds.add(str(kind))
    if not kinds:
        raise BadInput("records", "name at least one record type (time, absence, expense)")
    return kinds


def period_bounds(context: RequestContext, period: Mapping[str, Any] | None) -> tuple[int, int]:
    """[start, end) in ms of the report's period (default: the current month)."""
    period = period or {"target": "current", "period": "month"}
    target = period.get("target")
    if target not in TARGETS:
        raise BadInput("period.target", f"must be one of {', '.join(TARGETS)}")
    if target == "custom":
        start, end = period.get("start"), period.get("end")
        if start is None or end is None:
            raise BadInput("period.start" if start is None else "period.end",
                           "a custom period needs both start and end")
        if end <= start:
            raise BadInput("period.end", "must be after period.start")
        return int(start), int(end)
    zone = organisation_zone(context.organisation)
    try:
        first, after = report_days(target, period.get("period"), day_of(context.now_ms, zone))
    except ValueError:
        raise BadInput("period.period", f"the {target} period needs one of day, week, "
                       "biWeekly, semiMonth, month, quarter, year") from None

    def ms(day: Any) -> int:
        return int(datetime.combine(day, time(), tzinfo=zone).timestamp() * 1000)

    return ms(first), ms(after)


def check_filters(filters: Sequence[Mapping[str, Any] | None]) -> list[Mapping[str, Any]]:
    checked: list[Mapping[str, Any]] = []
    for index, item in enumerate(filters):
        if item is None:
            raise BadInput(f"filters[{index}]", "must be an object, not null")
        named = False
        for key, value in item.items():
            if value is None:
                continue
            if key not in _FILTER_KEYS:
                raise BadInput(f"filters[{index}].{key}", "is not supported by this report "
                               f"(supported: {', '.join(_FILTER_KEYS[:-1])})")
            if key == "following":
                if str(value).upper() not in ("AND", "OR"):
                    raise BadInput(f"filters[{index}].following", "must be AND or OR")
            else:
                named = True
        if not named:
            raise BadInput(f"filters[{index}]", "names no field to match")
        checked.append(item)
    return checked


def _holds(item: Mapping[str, Any], person_id: str, projects: list[str]) -> bool:
    """One filter object: every field it sets matches (projects: the record's projects and
    their ancestors)."""
    if item.get("personId") and person_id != item["personId"]:
        return False
    if item.get("notPersonId") and person_id == item["notPersonId"]:
        return False
    wanted = [item["projectId"]] if item.get("projectId") else []
    wanted += [p for p in item.get("projectIds") or [] if p]
    if wanted and not set(wanted) & set(projects):
        return False
    unwanted = [item["notProjectId"]] if item.get("notProjectId") else []
    unwanted += [p for p in item.get("notProjectIds") or [] if p]
    return not set(unwanted) & set(projects)


def _matches(filters: Sequence[Mapping[str, Any]], person_id: str, projects: list[str]) -> bool:
    """The filter objects chained left to right by each one's `following` (AND when unset),
    as the `filter` arrays of the list queries are (service/graphql/filters.py)."""
    result: bool | None = None
    pending = "AND"
    for item in filters:
        this = _holds(item, person_id, projects)
        if result is None:
            result = this
        else:
            result = (result or this) if pending == "OR" else (result and this)
        pending = str(item.get("following") or "AND").upper()
    return True if result is None else result


def _currency(context: RequestContext, options: Mapping[str, Any]) -> str:
    currency = str(options.get("currency") or context.organisation.currency or "EUR").upper()
    if len(currency) != 3 or not currency.isalpha():
        raise BadInput("options.currency", f"must be a three-letter code, got {currency!r}")
    return currency


def _quantities(totals: Totals, money: bool, wfh_ms: int,
                schedule: sched.ScheduleTotals, options: Mapping[str, Any]) -> dict[str, Any]:
    def f(value: Any) -> float:
        return float(value) if money else 0.0

    markup = (totals.margin / totals.cost * 100 if money and totals.cost
              else Decimal(0)).quantize(Decimal("0.01"))
    hours_ms = totals.hours * 3_600_000
    wfh_share = int(Decimal(wfh_ms) * 100 / hours_ms) if hours_ms else 0

    return {
        "hours": float(totals.hours),
        "hourBilling": f(totals.billing),
        "hourlyBilling": f(totals.hourly_billing),
        "dailyBilling": f(totals.daily_billing),
        "hourCost": f(totals.cost),
        "hourlyCost": f(totals.hourly_cost),
        "dailyCost": f(totals.daily_cost),
        "margin": f(totals.margin),
        "marginPercent": f(totals.margin_percent.quantize(Decimal("0.01"))),
        "billableHours": float(totals.billable_hours),
        "billablePercentage": totals.billable_percentage,
        "markupPercent": float(markup),
        # whole hours (the reference's type is Int) and the share of the time, rounded down
        "wfhHours": wfh_ms // 3_600_000,
        "wfhPercentage": wfh_share,
        **sched.quantities(schedule, totals.billable_ms, options),
    }


def _effort(tasks: Mapping[str, float | None]) -> dict[str, float]:
    """The planned effort, in hours, of the tasks the row's time was recorded on (each task
    once; a task's effort is stored in minutes)."""
    minutes = sum((Decimal(str(m)) for m in tasks.values() if m), Decimal(0))
    return {"effort": float(minutes / 60)}


def check_params(context: RequestContext, args: Mapping[str, Any]) -> None:
    """Refuses (BadInput naming the argument) the parameters this report cannot honour,
    without reading anything: what a saved report is checked with before it is stored."""
    _records(args.get("records") or [])
    if args.get("period") is not None:
        period_bounds(context, args.get("period"))
    attributes = args.get("attributes") or {}
    for key in _UNSUPPORTED_ATTRIBUTES:
        if attributes.get(key):
            raise BadInput(f"attributes.{key}", "is not supported by this report")
    fields.requested(attributes)
    if args.get("groupBy"):
        raise BadInput("groupBy", "is not supported: group with attributes.person and "
                       "attributes.projects")
    _currency(context, args.get("options") or {})
    check_filters(args.get("filters") or [])


async def run_inline_report(context: RequestContext, args: Mapping[str, Any],
                            scopes: Sequence[Sequence[Mapping[str, Any]]] = (),
                            record_scope: str | None = None) -> dict[str, Any]:
    """The report's rows. `scopes`: further filter chains every record must also match
    (a saved report's folder and its own filters); `record_scope`: the only record type
    (a folder's recordScope)."""
    check_params(context, args)
    kinds = _records(args.get("records") or [])
    if record_scope is not None:
        kinds &= {record_scope}
    start_ms, end_ms = period_bounds(context, args.get("period"))
    attributes = args.get("attributes") or {}
    options = args.get("options") or {}
    currency = _currency(context, options)
    chains = [check_filters(args.get("filters") or []), *scopes]
    money = await may_view_rates(context)
    if not money and any(options.get(key) for key in _MONEY_OPTIONS):
        raise PermissionDenied("billing and cost amounts need the Billing rates permission")
    by_person = bool(attributes.get("person"))
    by_projects = bool(attributes.get("projects"))

    statement = select(TimeRecord).where(
        TimeRecord.organisation_id == context.org_id,
        TimeRecord.start_ms >= start_ms,
        TimeRecord.start_ms < end_ms,
    )
    if not kinds:
        return {"rows": [], "error": None}
    timed = kinds - {"expense"}
    if timed == {"time"}:
        statement = statement.where(TimeRecord.absence_id.is_(None))
    elif timed == {"absence"}:
        statement = statement.where(TimeRecord.absence_id.is_not(None))
    visible = await context.visible_person_ids()
    if visible is not None:
        statement = statement.where(TimeRecord.person_id.in_(visible))
    records = list((await context.session.scalars(statement.order_by(TimeRecord.start_ms)))
                   .unique()) if timed else []
    accumulators = await fields.load(context, fields.requested(attributes), start_ms, end_ms)

    billing_book, _ = await load_book(context.session, context.organisation, RATE_BILLING)
    cost_book, _ = await load_book(context.session, context.organisation, RATE_COST)
    zone = organisation_zone(context.organisation)
    persons: dict[str, Person] = {}
    projects: dict[str, Project] = {}
    priced: list[PricedEntry] = []
    wfh: dict[Hashable, int] = {}
    spans: dict[Hashable, dict[str, list[tuple[int, int]]]] = {}
    efforts: dict[Hashable, dict[str, float | None]] = {}
    for record in records:
        project_ids = [p.id for p in record.projects]
        chain = project_chain(billing_book, project_ids)
        if not all(_matches(filters, record.person_id, chain) for filters in chains):
            continue
        persons[record.person_id] = record.person
        projects.update({p.id: p for p in record.projects})
        entry = Entry(day_of(record.start_ms, zone), record.person_id, project_ids)
        absence = record.absence_id is not None
        group: Hashable = (
            record.person_id if by_person else None,
            tuple(sorted(project_ids)) if by_projects else None,
        )
        if record.task is not None:
            efforts.setdefault(group, {})[record.task.id] = record.task.effort
        spans.setdefault(group, {}).setdefault(record.person_id, []).append(
            (record.start_ms, record.duration_ms))
        accumulators.add(group, record.id)
        if record.wfh:
            wfh[group] = wfh.get(group, 0) + record.duration_ms
        cost = resolve(cost_book, entry)
        if absence and not (record.absence is not None and record.absence.involve_costs):
            cost = None
        priced.append(PricedEntry(
            group, record.person_id, entry.day, record.start_ms, record.duration_ms,
            record.non_billable or absence,
            None if absence else resolve(billing_book, entry), cost,
        ))
    report = summarise(priced, currency)

    def expense_group(item: ExpenseRecord) -> Hashable | None:
        chain = project_chain(billing_book, [item.project_id] if item.project_id else [])
        if not all(_matches(filters, item.person_id or "", chain) for filters in chains):
            return None
        if item.person is not None:
            persons[item.person.id] = item.person
        if item.project is not None:
            projects[item.project.id] = item.project
        return (item.person_id if by_person else None,
                ((item.project_id,) if item.project_id else ()) if by_projects else None)

    expenses = (exp.summarise(await exp.load(context, start_ms, end_ms), currency,
                              expense_group)
                if "expense" in kinds else exp.ExpenseReport())
    plans = (await sched.plans(context, list(persons.values()), start_ms, end_ms)
             if sched.wanted(options) else {})

    def schedule_of(group: Hashable) -> sched.ScheduleTotals:
        totals = sched.ScheduleTotals()
        for person_id, items in spans.get(group, {}).items():
            person_zone, planned = plans.get(person_id, (zone, None))
            recorded: dict[Any, int] = {}
            for start, duration in items:
                day = sched.local_day(start, person_zone)
                recorded[day] = recorded.get(day, 0) + duration
            totals.add(sched.schedule_totals(recorded, planned,
                                             bool(options.get("countScheduleDays"))))
        return totals

    rows = []
    groups = list(report.rows) + [g for g in expenses.rows if g not in report.rows]
    for group_key in groups:
        totals = report.rows.get(group_key) or Totals()
        person_id, project_key = cast(tuple[str | None, tuple[str, ...] | None], group_key)
        person = persons.get(person_id) if person_id else None
        row_projects = [projects[p] for p in project_key or ()]
        rows.append({
            "entities": {"person": person, "projects": row_projects, "tasks": [],
                         "absenceType": None},
            "quantities": _quantities(totals, money, wfh.get(group_key, 0),
                                      schedule_of(group_key), options)
            | _effort(efforts.get(group_key, {}))
            | expenses.rows.get(group_key, exp.ExpenseTotals()).quantities()
            | {"customFields": accumulators.row(group_key)},
        })
    rows.sort(key=lambda r: (
        r["entities"]["person"].name if r["entities"]["person"] else "",
        [p.name for p in r["entities"]["projects"]],
    ))
    error = None
    others = (report.other_currencies if money else set()) | expenses.other_currencies
    if others:
        error = (f"amounts in {', '.join(sorted(others))} are left out: "
                 f"this report is in {currency}")
    return {"rows": rows, "error": error}
