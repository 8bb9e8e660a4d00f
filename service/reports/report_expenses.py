"""runInlineReport's expense quantities (records: ["expense"]): the expense records dated in
the period that the caller may see (as getExpenseRecords) and the report's filters keep,
grouped as the time records are (person and/or project), amounts summed exactly in the
report's currency's smallest unit.

expenseAmount: the sum of the records' amounts; expenseQuantity: how many records;
expenseBilling: the part of expenseAmount recorded against a project (what can be passed on
to the project's client). Records in another currency are left out and named in the error.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from sqlalchemy import and_, or_, select

from service.access import managed_project_ids
from service.graphql.context import RequestContext
from service.models import ExpenseRecord


@dataclass
class ExpenseTotals:
    amount: int = 0
    quantity: int = 0
    billing: int = 0

    def quantities(self) -> dict[str, float]:
        return {"expenseAmount": float(self.amount), "expenseQuantity": float(self.quantity),
                "expenseBilling": float(self.billing)}


@dataclass
class ExpenseReport:
    rows: dict[Hashable, ExpenseTotals] = field(default_factory=dict)
    other_currencies: set[str] = field(default_factory=set)
    records: list[ExpenseRecord] = field(default_factory=list)


async def load(context: RequestContext, start_ms: int, end_ms: int) -> list[ExpenseRecord]:
    statement = select(ExpenseRecord).where(
        ExpenseRecord.organisation_id == context.org_id,
        ExpenseRecord.date_ms >= start_ms,
        ExpenseRecord.date_ms < end_ms,
    )
    visible = await context.visible_person_ids()
    if visible is not None:  # as getExpenseRecords: visible people's, managed projects' own
        managed = await managed_project_ids(context.session, context.org_id, context.person.id)
        statement = statement.where(or_(
            ExpenseRecord.person_id.in_(visible),
            and_(ExpenseRecord.person_id.is_(None), ExpenseRecord.project_id.in_(managed)),
        ))
    return list((await context.session.scalars(statement.order_by(ExpenseRecord.date_ms)))
                .unique())


def summarise(records: list[ExpenseRecord], currency: str,
              group_of: Callable[[ExpenseRecord], Hashable | None]) -> ExpenseReport:
    """`group_of`: the record's row, None when the filters leave it out."""
    report = ExpenseReport()
    for record in records:
        group = group_of(record)
        if group is None:
            continue
        if record.currency.upper() != currency:
            report.other_currencies.add(record.currency.upper())
            continue
        report.records.append(record)
        totals = report.rows.setdefault(group, ExpenseTotals())
        totals.amount += record.value
        totals.quantity += 1
        if record.project_id is not None:
            totals.billing += record.value
    return report
