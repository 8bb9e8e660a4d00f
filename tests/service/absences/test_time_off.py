"""Time off over POST /graphql: accrual settings, allowances at three levels, the balance
check on absence records, getAbsenceQuotaConsumed and getAbsenceQuotaReport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import select

from plumbing.db import unit_of_work
from service.models import AuditTrail
from tests.support import DAY_MS, HOUR_MS, Member, Org

JAN_1 = 1_767_225_600_000  # 2026-01-01T00:00:00Z (the organisation's zone is UTC)
NEXT_JAN_1 = 1_798_761_600_000  # 2027-01-01
MARCH_16 = 1_773_619_200_000  # 2026-03-16, a Monday
UNKNOWN = "0123456789abcdef01234567"
ACCRUAL = "accrual { isEnabled periodicity periodStartDay awarded quantity allowNegativeBooking }"
QUOTA = ("id absenceType { id } startTime { ts } endTime { ts } available endDateExtension { ts }"
         " carryForwardLimit accruedCorrection allowNegativeBalance recurrent")
ADD_PERSON_QUOTA = f"""mutation($p: SvcId!, $a: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!,
  $available: Int, $limit: Int, $negative: Boolean, $recurrent: Boolean) {{
  addPersonAbsenceQuota(personId: $p, absenceId: $a, startTime: $s, endTime: $e,
    available: $available, carryForwardLimit: $limit, allowNegativeBalance: $negative,
    recurrent: $recurrent) {{ {QUOTA} }}
}}"""
ADD_RECORD = """mutation($p: SvcId!, $a: SvcId!, $s: SvcTimestamp!, $d: Int!) {
  addTimeRecord(personId: $p, absenceId: $a, startTime: $s, duration: $d) { id }
}"""
CONSUMED = """query($p: SvcId!, $q: [SvcId!]!) {
  getAbsenceQuotaConsumed(personId: $p, absenceQuotaIds: $q)
}"""
REPORT = """query($s: SvcTimestamp!, $e: SvcTimestamp!, $f: [SvcReportFilter], $t: [SvcId!]) {
  getAbsenceQuotaReport(startTime: $s, endTime: $e, filters: $f, absenceTypeIds: $t) {
    quotas { personId absenceTypeId quotaId startTime { ts } endTime { ts } available
             accruedCorrection carryForwardLimit allowNegativeBalance consumed }
    records { personId absenceTypeId duration status }
    absenceTypes { id name unit }
    persons { id name }
  }
}"""


@pytest.fixture
async def clock(org: Org) -> AsyncIterator[None]:
    saved = org.live.clock.frozen_ms
    org.live.clock.set(MARCH_16 + 9 * HOUR_MS)
    yield
    org.live.clock.frozen_ms = saved


async def vacation(org: Org, name: str = "Vacation") -> str:
    data = await org.admin.gql(f'mutation {{ addAbsenceType(name: "{name}") {{ id }} }}')
    return str(data["addAbsenceType"]["id"])


async def person_quota(org: Org, person: str, absence: str, **extra: Any) -> dict[str, Any]:
    variables = {"p": person, "a": absence, "s": JAN_1, "e": NEXT_JAN_1, **extra}
    return (await org.admin.gql(ADD_PERSON_QUOTA, variables))["addPersonAbsenceQuota"]  # type: ignore[no-any-return]


async def log_absence(who: Member, person: str, absence: str, start: int,
                      duration: int = 8 * HOUR_MS) -> Any:
    return await who.gql.body(ADD_RECORD, {"p": person, "a": absence, "s": start, "d": duration})


async def audited(org: Org, operation: str) -> int:
    async with unit_of_work(org.live.service.sessions) as session:
        rows = list(await session.scalars(select(AuditTrail.id).where(
            AuditTrail.organisation_id == org.id, AuditTrail.operation_name == operation)))
    return len(rows)


async def test_accrual_settings(org: Org) -> None:
    type_id = await vacation(org)
    read = await org.admin.gql(f'{{ getAbsenceType(id: "{type_id}") {{ {ACCRUAL} }} }}')
    assert read["getAbsenceType"]["accrual"] == {
        "isEnabled": False, "periodicity": "monthly", "periodStartDay": 1,
        "awarded": "firstDay", "quantity": 0.0, "allowNegativeBooking": False}
    edits = [
        ("editAbsenceTypeAccrualEnabled", "isEnabled", "Boolean!", True),
        ("editAbsenceTypeAccrualPeriodStartDay", "periodStartDay", "Int!", 3),
        ("editAbsenceTypeAccrualPeriodicity", "periodicity", "SvcPeriodicity!", "biWeekly"),
        ("editAbsenceTypeAccrualAwarded", "awarded", "SvcDayOption!", "firstDayNextPeriod"),
        ("editAbsenceTypeAccrualQuantity", "quantity", "Float!", 1.25),
        ("editAbsenceTypeAccrualNegativeBooking", "allowNegativeBooking", "Boolean!", True),
    ]
    for operation, argument, kind, value in edits:
        query = (f"mutation($id: SvcId!, $v: {kind}) {{ {operation}(id: $id, {argument}: $v) "
                 f"{{ {ACCRUAL} }} }}")
        data = await org.admin.gql(query, {"id": type_id, "v": value})
        assert data[operation]["accrual"][argument] == value
        assert await audited(org, operation) == 1
    employee = await org.add_member("Eve")
    refused = await employee.gql.denied(
        f'mutation {{ editAbsenceTypeAccrualQuantity(id: "{type_id}", quantity: 3) {{ id }} }}')
    assert refused == ["Mutation.editAbsenceTypeAccrualQuantity"]
    assert await audited(org, "editAbsenceTypeAccrualQuantity") == 1

    async def error(operation: str, argument: str, value: str) -> str:
        return await org.admin.gql.error(
            f'mutation {{ {operation}(id: "{type_id}", {argument}: {value}) {{ id }} }}')

    assert 'Invalid argument "periodStartDay"' in await error(
        "editAbsenceTypeAccrualPeriodStartDay", "periodStartDay", "9")  # weekday for biWeekly
    assert 'Invalid argument "quantity"' in await error(
        "editAbsenceTypeAccrualQuantity", "quantity", "-1")
    assert "SvcPeriodicity must be one of" in await error(
        "editAbsenceTypeAccrualPeriodicity", "periodicity", '"hourly"')
    assert "SvcDayOption must be one of" in await error(
        "editAbsenceTypeAccrualAwarded", "awarded", '"someday"')
    for change in ('editAbsenceTypeAccrualPeriodicity(id: "{id}", periodicity: "monthly")',
                   'editAbsenceTypeAccrualPeriodStartDay(id: "{id}", periodStartDay: 20)'):
        await org.admin.gql(f"mutation {{ {change.format(id=type_id)} {{ id }} }}")
    message = await error("editAbsenceTypeAccrualPeriodicity", "periodicity", '"weekly"')
    assert 'Invalid argument "periodicity"' in message and "periodStartDay 20" in message
    assert 'Invalid argument "id"' in await org.admin.gql.error(
        f'mutation {{ editAbsenceTypeAccrualEnabled(id: "{UNKNOWN}", isEnabled: true) {{ id }} }}')


async def test_allowances_at_three_levels(org: Org) -> None:
    type_id = await vacation(org)
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    tag = (await org.admin.gql('mutation { addTag(name: "Team") { id } }'))["addTag"]["id"]
    await org.admin.gql(f'mutation {{ tagPerson(personId: "{bob.id}", tagId: "{tag}") {{ id }} }}')
    organisation = (await org.admin.gql(
        f'mutation {{ addOrganisationAbsenceQuota(absenceId: "{type_id}", startTime: {JAN_1}, '
        f'endTime: {NEXT_JAN_1}, available: 20) {{ {QUOTA} }} }}'))["addOrganisationAbsenceQuota"]
    assert organisation["carryForwardLimit"] == 0 and organisation["recurrent"] is False
    tagged = (await org.admin.gql(
        f'mutation {{ addTagAbsenceQuota(tagId: "{tag}", absenceId: "{type_id}", '
        f'startTime: {JAN_1}, endTime: {NEXT_JAN_1}, available: 25) {{ id }} }}'
    ))["addTagAbsenceQuota"]
    own = await person_quota(org, eve.id, type_id, available=30)
    people = f"""{{ a: getPerson(id: "{bob.id}") {{ absenceQuotas {{ value {{ id available }}
        path {{ collection }} }} }}
      b: getPerson(id: "{eve.id}") {{ absenceQuotas {{ value {{ id }} path {{ collection }} }} }}
      currentOrganisation {{ absenceQuotas {{ value {{ id }} }} }} }}"""
    for operation in ("addOrganisationAbsenceQuota", "addTagAbsenceQuota",
                      "addPersonAbsenceQuota"):
        assert await audited(org, operation) == 1
    data = await org.admin.gql(people)
    assert data["a"]["absenceQuotas"] == {"value": [{"id": tagged["id"], "available": 25}],
                                          "path": [{"collection": "tags"}]}
    inherited = await org.admin.gql(
        f'{{ getPerson(id: "{org.admin.id}") {{ absenceQuotas {{ value {{ id }} '
        "path { collection } } } }")
    assert inherited["getPerson"]["absenceQuotas"] == {
        "value": [{"id": organisation["id"]}], "path": [{"collection": "organisations"}]}
    assert data["b"]["absenceQuotas"]["value"] == [{"id": own["id"]}]
    assert data["currentOrganisation"]["absenceQuotas"]["value"] == [{"id": organisation["id"]}]
    # A person reads their own allowances, not someone else's.
    mine = await bob.gql(
        f'{{ getPerson(id: "{bob.id}") {{ absenceQuotas {{ value {{ id }} }} }} }}')
    assert mine["getPerson"]["absenceQuotas"]["value"] == [{"id": tagged["id"]}]
    body = await bob.gql.body(
        f'{{ getPerson(id: "{eve.id}") {{ absenceQuotas {{ value {{ id }} }} }} }}')
    assert body["permissionsErrors"] and body["data"]["getPerson"].get("absenceQuotas") is None

    edits = [
        ("editAbsenceQuotaAvailable", "available", "Int!", 12, 12),
        ("editAbsenceQuotaCarryForwardLimit", "carryForwardLimit", "Int!", 5, 5),
        ("editAbsenceQuotaAccruedCorrection", "accruedCorrection", "Int!", -2, -2),
        ("editAbsenceQuotaAllowNegativeBalance", "allowNegativeBalance", "Boolean!", True, True),
        ("editAbsenceQuotaRecurrent", "recurrent", "Boolean!", True, True),
        ("editAbsenceQuotaStartTime", "startTime", "SvcTimestamp!", JAN_1 + DAY_MS,
         {"ts": JAN_1 + DAY_MS}),
        ("editAbsenceQuotaEndTime", "endTime", "SvcTimestamp!", NEXT_JAN_1 - DAY_MS,
         {"ts": NEXT_JAN_1 - DAY_MS}),
        ("editAbsenceQuotaEndDateExtension", "endDateExtension", "SvcTimestamp", NEXT_JAN_1,
         {"ts": NEXT_JAN_1}),
    ]
    for operation, argument, kind, value, shown in edits:
        query = (f"mutation($id: SvcId!, $v: {kind}) {{ {operation}(id: $id, {argument}: $v) "
                 f"{{ {QUOTA} }} }}")
        data = await org.admin.gql(query, {"id": own["id"], "v": value})
        assert data[operation][argument] == shown
        assert await audited(org, operation) == 1
        denied = await eve.gql.denied(query, {"id": own["id"], "v": value})
        assert denied == [f"Mutation.{operation}"]

    async def error(query: str) -> str:
        return await org.admin.gql.error(query)

    assert 'Invalid argument "endTime"' in await error(
        f'mutation {{ addPersonAbsenceQuota(personId: "{eve.id}", absenceId: "{type_id}", '
        f'startTime: {NEXT_JAN_1}, endTime: {JAN_1}) {{ id }} }}')
    assert 'Invalid argument "available"' in await error(
        f'mutation {{ addOrganisationAbsenceQuota(absenceId: "{type_id}", startTime: {JAN_1}, '
        f'endTime: {NEXT_JAN_1}, available: -1) {{ id }} }}')
    assert 'Invalid argument "absenceId"' in await error(
        f'mutation {{ addTagAbsenceQuota(tagId: "{tag}", absenceId: "{UNKNOWN}", '
        f'startTime: {JAN_1}, endTime: {NEXT_JAN_1}) {{ id }} }}')
    assert 'Invalid argument "endDateExtension"' in await error(
        f'mutation {{ editAbsenceQuotaEndDateExtension(id: "{own["id"]}", '
        f'endDateExtension: {JAN_1 + 2 * DAY_MS}) {{ id }} }}')
    assert 'Invalid argument "carryForwardLimit"' in await error(
        f'mutation {{ editAbsenceQuotaCarryForwardLimit(id: "{own["id"]}", '
        "carryForwardLimit: -3) { id } }")
    # Deleting through the wrong owner names the argument and deletes nothing.
    assert 'Invalid argument "absenceQuotaId"' in await error(
        f'mutation {{ deletePersonAbsenceQuota(personId: "{bob.id}", '
        f'absenceQuotaId: "{own["id"]}") {{ id }} }}')
    assert await eve.gql.denied(
        f'mutation {{ deletePersonAbsenceQuota(personId: "{eve.id}", '
        f'absenceQuotaId: "{own["id"]}") {{ id }} }}') == ["Mutation.deletePersonAbsenceQuota"]
    assert await eve.gql.denied(
        f'mutation {{ addOrganisationAbsenceQuota(absenceId: "{type_id}", startTime: {JAN_1}, '
        f'endTime: {NEXT_JAN_1}) {{ id }} }}') == ["Mutation.addOrganisationAbsenceQuota"]
    for operation, owner in (("deletePersonAbsenceQuota", f'personId: "{eve.id}", '),
                             ("deleteTagAbsenceQuota", f'tagId: "{tag}", '),
                             ("deleteOrganisationAbsenceQuota", "")):
        quota = {"deletePersonAbsenceQuota": own, "deleteTagAbsenceQuota": tagged,
                 "deleteOrganisationAbsenceQuota": organisation}[operation]
        await org.admin.gql(
            f'mutation {{ {operation}({owner}absenceQuotaId: "{quota["id"]}") {{ id }} }}')
        assert await audited(org, operation) == 1
    data = await org.admin.gql(people)
    assert data["a"]["absenceQuotas"] == {"value": [], "path": []}
    # Deleting the absence type takes its allowances with it.
    again = await person_quota(org, eve.id, type_id)
    await org.admin.gql(f'mutation {{ deleteAbsenceType(id: "{type_id}") {{ id }} }}')
    data = await org.admin.gql(people)
    assert data["b"]["absenceQuotas"]["value"] == []
    assert 'Invalid argument "id"' in await error(
        f'mutation {{ editAbsenceQuotaRecurrent(id: "{again["id"]}", recurrent: true) {{ id }} }}')


async def test_absence_counts_at_once_and_overdraw_is_refused(org: Org, clock: None) -> None:
    type_id = await vacation(org)
    eve = await org.add_member("Eve")
    quota = await person_quota(org, eve.id, type_id, available=2)
    # Absences count as soon as they are recorded: nothing is submitted or approved.
    for day in (0, 1):
        assert "errors" not in await log_absence(eve, eve.id, type_id, MARCH_16 + day * DAY_MS)
    consumed = await eve.gql(CONSUMED, {"p": eve.id, "q": [quota["id"]]})
    assert consumed["getAbsenceQuotaConsumed"] == [2.0]
    refused = await log_absence(eve, eve.id, type_id, MARCH_16 + 2 * DAY_MS, 4 * HOUR_MS)
    message = refused["errors"][0]["message"]
    assert "Not enough time off left" in message and quota["id"] in message
    assert "Vacation allowance 2026-01-01 to 2026-12-31" in message and "-0.5 day" in message
    count = await eve.gql("{ countTimeRecords(absence: true) }")
    assert count["countTimeRecords"] == 2
    # Shrinking an absence frees the allowance; growing one again is checked.
    records = await eve.gql(f"{{ getTimeRecords(startTime: {MARCH_16}, endTime: "
                            f"{MARCH_16 + 7 * DAY_MS}) {{ id startTime {{ ts }} }} }}")
    first = next(r["id"] for r in records["getTimeRecords"] if r["startTime"]["ts"] == MARCH_16)
    grow = f'mutation {{ editTimeRecordDuration(id: "{first}", duration: {8 * HOUR_MS}) {{ id }} }}'
    await eve.gql(grow.replace(str(8 * HOUR_MS), str(4 * HOUR_MS)))
    assert "errors" not in await log_absence(eve, eve.id, type_id, MARCH_16 + 2 * DAY_MS,
                                             4 * HOUR_MS)
    assert "Not enough time off left" in await eve.gql.error(grow)
    other = await vacation(org, "Training")
    no_allowance = await log_absence(eve, eve.id, other, MARCH_16 + 3 * DAY_MS)
    assert "errors" not in no_allowance
    retyped = no_allowance["data"]["addTimeRecord"]["id"]
    assert "Not enough time off left" in await eve.gql.error(
        f'mutation {{ editTimeRecordAbsence(id: "{retyped}", absenceId: "{type_id}") {{ id }} }}')
    # Allowed to go negative: accepted.
    await org.admin.gql(f'mutation {{ editAbsenceQuotaAllowNegativeBalance(id: "{quota["id"]}", '
                        'allowNegativeBalance: true) { id } }')
    assert "errors" not in await log_absence(eve, eve.id, type_id, MARCH_16 + 4 * DAY_MS)
    consumed = await eve.gql(CONSUMED, {"p": eve.id, "q": [quota["id"]]})
    assert consumed["getAbsenceQuotaConsumed"] == [3.0]
    bob = await org.add_member("Bob")
    assert await bob.gql.denied(CONSUMED, {"p": eve.id, "q": [quota["id"]]}) == [
        "Query.getAbsenceQuotaConsumed"]
    assert 'Invalid argument "absenceQuotaIds' in await eve.gql.error(
        CONSUMED, {"p": eve.id, "q": [UNKNOWN]})


async def test_accrual_and_report(org: Org, clock: None) -> None:
    type_id = await vacation(org)
    for operation, argument, value in (("editAbsenceTypeAccrualEnabled", "isEnabled", "true"),
                                       ("editAbsenceTypeAccrualQuantity", "quantity", "1.5"),
                                       ("editAbsenceTypeAccrualAwarded", "awarded",
                                        '"lastDay"')):
        await org.admin.gql(
            f'mutation {{ {operation}(id: "{type_id}", {argument}: {value}) {{ id }} }}')
    eve = await org.add_member("Eve")
    bob = await org.add_member("Bob")
    quota = await person_quota(org, eve.id, type_id, available=1, limit=2, recurrent=True)
    await person_quota(org, bob.id, type_id)
    # As of 2026-03-16: awarded 1 + 1.5 (Jan 31) + 1.5 (Feb 28) = 4 days.
    await log_absence(eve, eve.id, type_id, MARCH_16, 8 * HOUR_MS)
    # 32 hours on one day count one day.
    assert "errors" not in await log_absence(eve, eve.id, type_id, MARCH_16 + DAY_MS,
                                             4 * 8 * HOUR_MS)
    for day in (2, 3):
        assert "errors" not in await log_absence(eve, eve.id, type_id, MARCH_16 + day * DAY_MS)
    assert "Not enough" in (await log_absence(eve, eve.id, type_id,
                                              MARCH_16 + 4 * DAY_MS))["errors"][0]["message"]
    # Booking ahead against what accrues by the end of the cycle, once allowed.
    await org.admin.gql(f'mutation {{ editAbsenceTypeAccrualNegativeBooking(id: "{type_id}", '
                        'allowNegativeBooking: true) { id } }')
    assert "errors" not in await log_absence(eve, eve.id, type_id, MARCH_16 + 4 * DAY_MS)

    variables = {"s": JAN_1, "e": JAN_1 + 400 * DAY_MS}
    report = (await org.admin.gql(REPORT, variables))["getAbsenceQuotaReport"]
    mine = [entry for entry in report["quotas"] if entry["personId"] == eve.id]
    # Awarded by 2027-02-04: 1 + 12 x 1.5 = 19 in 2026 (5 used, 14 left, 2 carried, 12
    # forfeited); 2027: 2 carried + 1 available + 1.5 (Jan 31).
    assert [(e["startTime"]["ts"], e["available"], e["consumed"], e["carryForwardLimit"])
            for e in mine] == [(JAN_1, 19.0, 5.0, 2.0), (NEXT_JAN_1, 4.5, 0.0, 2.0)]
    assert {e["quotaId"] for e in mine} == {quota["id"]}
    assert [r["duration"] for r in report["records"] if r["personId"] == eve.id] == [
        1.0, 4.0, 1.0, 1.0, 1.0]
    assert {r["status"] for r in report["records"]} == {"d"}
    assert report["absenceTypes"] == [{"id": type_id, "name": "Vacation", "unit": "day"}]
    # An employee sees only themselves; filters narrow; an unknown filter field is named.
    own = (await eve.gql(REPORT, variables))["getAbsenceQuotaReport"]
    assert {p["id"] for p in own["persons"]} == {eve.id}
    filtered = (await org.admin.gql(REPORT, {**variables, "f": [{"personId": bob.id}]}))
    assert [p["id"] for p in filtered["getAbsenceQuotaReport"]["persons"]] == [bob.id]
    assert 'Invalid argument "endTime"' in await org.admin.gql.error(
        REPORT, {"s": JAN_1, "e": JAN_1})
    assert 'Invalid argument "absenceTypeIds' in await org.admin.gql.error(
        REPORT, {**variables, "t": [UNKNOWN]})


async def test_concurrent_absences_cannot_overdraw(org: Org, clock: None) -> None:
    """Absences recorded at the same time against one allowance: only what fits goes in."""
    import asyncio

    type_id = await vacation(org)
    eve = await org.add_member("Eve")
    quota = await person_quota(org, eve.id, type_id, available=2)
    bodies = await asyncio.gather(*(
        log_absence(eve, eve.id, type_id, MARCH_16 + day * DAY_MS) for day in range(6)))
    accepted = [body for body in bodies if "errors" not in body]
    assert len(accepted) == 2
    assert all("Not enough time off left" in body["errors"][0]["message"]
               for body in bodies if "errors" in body)
    consumed = await eve.gql(CONSUMED, {"p": eve.id, "q": [quota["id"]]})
    assert consumed["getAbsenceQuotaConsumed"] == [2.0]
