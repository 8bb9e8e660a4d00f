"""Absence and expense type options over POST /graphql (service/type_options/type_flags.py's
table): each
row edited by the right role and refused to the wrong one, bad values named, the audit
trail; the three approval modes, and what they do to the timesheet workflow."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from plumbing.db import unit_of_work
from service.models import AuditTrail, Timesheet
from service.timesheets.content import load_content
from service.type_options.type_flags import FLAGS
from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_record,
    set_stages,
    state,
    submit,
)
from tests.support import DAY_MS, HOUR_MS, Member, Org

UNKNOWN = "0123456789abcdef01234567"
ABSENCE_FIELDS = ("id approval { sameAsTimesheet autoApprove noApproval } notification { "
                  "goingNegative bookingInAdvanceAccrual "
                  "excessOccurrences { frequency interval } }")
EXPENSE_FIELDS = "id isCurrency markup isInBudget"
EXCESS = "SvcAbsenceTypeExcessOccurrencesInput"
# mutation -> (argument type, a value, what the type reads back where, bad value, problem)
SAMPLES: dict[str, tuple[str, Any, tuple[str, ...], Any, str | None]] = {
    "editAbsenceTypeApprovalSameAsTimesheet": ("Boolean!", True,
                                               ("approval", "sameAsTimesheet"), None, None),
    "editAbsenceTypeApprovalAutoApprove": ("Boolean!", True, ("approval", "autoApprove"),
                                           None, None),
    "editAbsenceTypeApprovalNoApproval": ("Boolean!", True, ("approval", "noApproval"),
                                          None, None),
    "editAbsenceTypeNotificationGoingNegative": ("Boolean!", True,
                                                 ("notification", "goingNegative"), None, None),
    "editAbsenceTypeNotificationBookingInAdvanceAccrual": (
        "Boolean!", True, ("notification", "bookingInAdvanceAccrual"), None, None),
    "editAbsenceTypeNotificationExcessOccurrences": (
        EXCESS, {"frequency": 3, "interval": "month"}, ("notification", "excessOccurrences"),
        {"frequency": 2, "interval": "week"}, "interval must be one of month, year"),
    "editExpenseTypeIsCurrency": ("Boolean!", False, ("isCurrency",), None, None),
    "editExpenseTypeMarkup": ("Int!", 15, ("markup",), -5, "whole percentage from 0 to 1000"),
    "editExpenseTypeIsInBudget": ("Boolean!", False, ("isInBudget",), None, None),
}


async def audited(org: Org, operation: str) -> int:
    async with unit_of_work(org.live.service.sessions) as session:
        return int(await session.scalar(select(func.count()).select_from(AuditTrail).where(
            AuditTrail.organisation_id == org.id, AuditTrail.operation_name == operation)) or 0)


async def absence_type(org: Org, name: str) -> str:
    data = await org.admin.gql("mutation($n: SvcName!) { addAbsenceType(name: $n) { id } }",
                               {"n": name})
    return str(data["addAbsenceType"]["id"])


async def set_mode(org: Org, type_id: str, flag: str, on: bool = True) -> dict[str, bool]:
    operation = f"editAbsenceTypeApproval{flag[0].upper()}{flag[1:]}"
    data = await org.admin.gql(
        f"mutation($id: SvcId!, $v: Boolean!) {{ {operation}(id: $id, {flag}: $v) "
        f"{{ approval {{ sameAsTimesheet autoApprove noApproval }} }} }}",
        {"id": type_id, "v": on})
    return data[operation]["approval"]  # type: ignore[no-any-return]


def test_every_row_has_samples() -> None:
    assert {flag.mutation for flag in FLAGS} == set(SAMPLES)


@pytest.mark.parametrize("flag", FLAGS, ids=lambda flag: flag.mutation)
async def test_option_edits(org: Org, flag: Any) -> None:
    kind, value, path, bad, problem = SAMPLES[flag.mutation]
    absence = flag.owner.graphql_type == "SvcAbsenceType"
    adding = "addAbsenceType" if absence else "addExpenseType"
    fields = ABSENCE_FIELDS if absence else EXPENSE_FIELDS
    created = await org.admin.gql(f'mutation {{ {adding}(name: "Kind") {{ {fields} }} }}')
    type_id = created[adding]["id"]
    mutation = (f"mutation($id: SvcId!, $v: {kind}) {{ {flag.mutation}(id: $id, "
                f"{flag.argument}: $v) {{ {fields} }} }}")
    edited = (await org.admin.gql(mutation, {"id": type_id, "v": value}))[flag.mutation]
    read = edited
    for step in path:
        read = read[step]
    assert read == value
    getter = "getAbsenceType" if absence else "getExpenseType"
    employee = await org.add_member("Eve")
    again = (await employee.gql(f'{{ {getter}(id: "{type_id}") {{ {fields} }} }}'))[getter]
    assert again == edited
    assert await audited(org, flag.mutation) == 1
    assert await employee.gql.denied(mutation, {"id": type_id, "v": value}) == [
        f"Mutation.{flag.mutation}"]
    assert 'Invalid argument "id"' in await org.admin.gql.error(
        mutation, {"id": UNKNOWN, "v": value})
    if bad is not None:
        message = await org.admin.gql.error(mutation, {"id": type_id, "v": bad})
        assert f'Invalid argument "{flag.argument}"' in message and problem in message
    assert await audited(org, flag.mutation) == 1


async def test_approval_modes_are_exclusive(org: Org) -> None:
    type_id = await absence_type(org, "Sick")
    fresh = await org.admin.gql(f'{{ getAbsenceType(id: "{type_id}") {{ {ABSENCE_FIELDS} }} }}')
    assert fresh["getAbsenceType"]["approval"] == {
        "sameAsTimesheet": True, "autoApprove": False, "noApproval": False}
    assert fresh["getAbsenceType"]["notification"] == {
        "goingNegative": False, "bookingInAdvanceAccrual": False, "excessOccurrences": None}
    assert await set_mode(org, type_id, "autoApprove") == {
        "sameAsTimesheet": False, "autoApprove": True, "noApproval": False}
    assert await set_mode(org, type_id, "noApproval") == {
        "sameAsTimesheet": False, "autoApprove": False, "noApproval": True}
    # Turning off a flag that is not the mode changes nothing; the mode's returns to default.
    assert (await set_mode(org, type_id, "autoApprove", False))["noApproval"] is True
    assert (await set_mode(org, type_id, "noApproval", False))["sameAsTimesheet"] is True
    message = await org.admin.gql.error(
        f'mutation {{ editAbsenceTypeApprovalSameAsTimesheet(id: "{type_id}", '
        f'sameAsTimesheet: false) {{ id }} }}')
    assert 'Invalid argument "sameAsTimesheet"' in message and "autoApprove" in message
    cleared = await org.admin.gql(
        f'mutation {{ editAbsenceTypeNotificationExcessOccurrences(id: "{type_id}", '
        f'excessOccurrences: null) {{ notification {{ excessOccurrences {{ frequency }} }} }} }}')
    assert cleared["editAbsenceTypeNotificationExcessOccurrences"]["notification"] == {
        "excessOccurrences": None}


ADD_ABSENCE = """mutation($p: SvcId!, $a: SvcId!, $s: SvcTimestamp!) {
  addTimeRecord(personId: $p, absenceId: $a, startTime: $s, duration: 28800000) { id }
}"""
DELETE = "mutation($ids: [SvcId!]!) { deleteTimeRecords(ids: $ids) { id } }"


async def add_absence(who: Member, type_id: str, day: int) -> dict[str, Any]:
    return await who.gql.body(ADD_ABSENCE, {"p": who.id, "a": type_id,
                                            "s": WEEK + day * DAY_MS + 9 * HOUR_MS})


async def test_time_off_approval_in_the_workflow(org: Org) -> None:
    await set_stages(org, [{"type": "admin", "quorum": "ANY"}])
    bob = await org.add_member("Bob")
    vacation = await absence_type(org, "Vacation")  # approved automatically
    sick = await absence_type(org, "Sick")  # needs no approval
    training = await absence_type(org, "Training")  # the timesheet's workflow
    await set_mode(org, vacation, "autoApprove")
    await set_mode(org, sick, "noApproval")

    # A week holding only auto-approved time off is approved at once when submitted.
    assert "errors" not in await add_absence(bob, vacation, 0)
    assert (await submit(bob, bob))["status"] == "a"
    # Locked now, except for time off that needs no approval.
    added = await add_absence(bob, sick, 1)
    assert "errors" not in added, added
    sick_id = added["data"]["addTimeRecord"]["id"]
    for kind in (training, vacation):
        refused = await add_absence(bob, kind, 2)
        assert "approved and locked for its owner" in refused["errors"][0]["message"]
    assert (await bob.gql(DELETE, {"ids": [sick_id]}))["deleteTimeRecords"][0]["id"] == sick_id

    # Next week: work and no-approval time off go to the admins; the time off is not theirs
    # to review and stays the owner's to change while the week waits.
    eve = await org.add_member("Eve")
    work = await add_record(eve, eve, day=0)
    assert "errors" not in await add_absence(eve, sick, 1)
    event = await submit(eve, eve)
    assert event["status"] == "s"
    # What the approvers review is the work alone: so the submission (from the records its
    # entry rules read) and the content read from the database agree.
    async with unit_of_work(org.live.service.sessions) as session:
        snapshot = await session.scalar(select(Timesheet.snapshot).where(
            Timesheet.organisation_id == org.id, Timesheet.person_id == eve.id))
        content, _total = await load_content(session, org.id, eve.id, WEEK, WEEK_END)
    assert snapshot == content and set(content) == {work}, (snapshot, content)
    assert "errors" not in await add_absence(eve, sick, 2)
    refused = await add_absence(eve, training, 3)
    assert "submitted for approval and locked" in refused["errors"][0]["message"]
    assert (await state(eve, eve))["status"] == "s"
    # A week of time off that follows the timesheet waits for the admins.
    carl = await org.add_member("Carl")
    assert "errors" not in await add_absence(carl, training, 0)
    assert (await submit(carl, carl))["status"] == "s"

    report = await org.admin.gql(
        """query($s: SvcTimestamp!, $e: SvcTimestamp!) { getAbsenceQuotaReport(startTime: $s,
        endTime: $e) { records { personId absenceTypeId status } } }""",
        {"s": WEEK, "e": WEEK_END})
    statuses = {(r["personId"], r["absenceTypeId"]): r["status"]
                for r in report["getAbsenceQuotaReport"]["records"]}
    assert statuses[(bob.id, vacation)] == "a"
    assert statuses[(eve.id, sick)] == "a"
    assert statuses[(carl.id, training)] == "s"


async def test_a_duplicate_takes_the_options(org: Org) -> None:
    sick = await absence_type(org, "Sick")
    await set_mode(org, sick, "noApproval")
    copy = (await org.admin.gql(
        f'mutation {{ duplicateAbsenceType(id: "{sick}", name: "Sick 2") {{ {ABSENCE_FIELDS} '
        f'}} }}'))["duplicateAbsenceType"]
    assert copy["id"] != sick and copy["approval"]["noApproval"] is True
    travel = (await org.admin.gql('mutation { addExpenseType(name: "Travel") { id } }'))[
        "addExpenseType"]["id"]
    await org.admin.gql(f'mutation {{ editExpenseTypeMarkup(id: "{travel}", markup: 12) '
                        f'{{ id }} }}')
    copied = (await org.admin.gql(
        f'mutation {{ duplicateExpenseType(id: "{travel}", name: "Travel 2") '
        f'{{ {EXPENSE_FIELDS} }} }}'))["duplicateExpenseType"]
    assert copied["markup"] == 12 and copied["id"] != travel
