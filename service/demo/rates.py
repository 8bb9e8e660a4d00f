"""The demo organisation's billing and cost rates, a budget, the managers' view of rates and a
custom role, Accountant (rates, expenses, reports; held by nobody yet), called once from
service/demo/__init__.py, so that `make run` shows amounts in reports and a role with
permissions."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.ext.asyncio import AsyncSession

from service.access.permissions import BILLING_RATES, EXPENSES, REPORTS
from service.budgets.alerts import mark_budgets
from service.budgets.models import Budget
from service.models import Organisation, Person, Project, Role
from service.people.models import ROLE_CUSTOM
from service.rates.models import RATE_BILLING, RATE_COST, Rate, RateSplit

CURRENCY = "EUR"


def _rate(org_id: str, kind: str, start_ms: int, method: str, value: int, **where: str) -> Rate:
    return Rate(
        organisation_id=org_id, type=kind, start_ms=start_ms, method=method, value=value,
        currency=CURRENCY, repeat_occurrence="month", repeat_frequency=1, created_ms=start_ms,
        splits=[], **where,
    )


async def seed_demo_rates(
    session: AsyncSession,
    org_id: str,
    start_ms: int,
    persons: Mapping[str, Person],
    projects: Mapping[str, Project],
    manager_role: Role | None,
) -> None:
    harbor = _rate(org_id, RATE_BILLING, start_ms, "hourly", 14000,
                   project_id=projects["Harbor Bank"].id)
    harbor.split_type = "persons"
    harbor.splits.append(RateSplit(organisation_id=org_id, entity_id=persons["grace"].id,
                                   value=16000, currency=CURRENCY, position=0))
    retainer = _rate(org_id, RATE_BILLING, start_ms, "fixed", 250000,
                     project_id=projects["Brand refresh"].id)
    retainer.repeat_enabled = True
    session.add_all([
        _rate(org_id, RATE_BILLING, start_ms, "hourly", 9500),
        harbor,
        retainer,
        _rate(org_id, RATE_BILLING, start_ms, "daily", 90000,
              project_id=projects["Greenfield Foods"].id),
        _rate(org_id, RATE_BILLING, start_ms, "nonBillable", 0,
              project_id=projects["Internal"].id),
        _rate(org_id, RATE_COST, start_ms, "hourly", 4500),
        _rate(org_id, RATE_COST, start_ms, "hourly", 6000, person_id=persons["grace"].id),
        Budget(organisation_id=org_id, project_id=projects["Mobile banking app"].id,
               billing_value=6_000_000, billing_currency=CURRENCY, cost_value=3_500_000,
               cost_currency=CURRENCY, quantity=400, created_ms=start_ms),
    ])
    organisation = await session.get(Organisation, org_id)
    if organisation is not None:
        mark_budgets(organisation)  # its alerts fire as the demo's time is recorded
    if manager_role is not None:
        manager_role.authorisations = {
            **(manager_role.authorisations or {}),
            BILLING_RATES: {"view": ["all"], "manage": []},
        }
    everything = {"view": ["all"], "manage": ["all"]}
    session.add(Role(organisation_id=org_id, name="Accountant", kind=ROLE_CUSTOM,
                     archived=False, color="#2e7d32",
                     authorisations={BILLING_RATES: everything, EXPENSES: everything,
                                     REPORTS: {"view": ["all"], "manage": []}}))
