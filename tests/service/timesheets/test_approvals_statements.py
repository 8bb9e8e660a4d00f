"""How many SQL statements one approveTimesheet runs (the mail reply path's approval) and one
submitTimesheet (a Monday morning's bulk: 900 in a minute), pinned on both databases so that a
change that adds a round trip to them is a decision, not an accident; and that the webhook
event an approval queues is what it was when the webhooks and the owner were read on their
own (issue #26: they are read with the submission)."""

from __future__ import annotations

import json

from sqlalchemy import select

from tests.service.test_approvals_support import (
    SUBMIT,
    WEEK,
    WEEK_END,
    add_record,
    manage,
    set_stages,
    submit,
)
from tests.statement_counter import statements
from tests.support import Member, Org

APPROVE = "mutation($id: SvcId!) { approveTimesheet(id: $id) { id status stage } }"

# The key with its organisation and person; the submit event with its timesheet, its owner and
# the organisation's webhooks (on PostgreSQL the timesheet locked first, then the event and
# the webhooks: approvals/locks.py); the approval; the journal message and its mention; the
# approved event, the submit event's and the timesheet's new status; the audit row. (Before
# issue #26's Core path: 10 and 11, the webhooks read on their own.)
STATEMENTS_PER_APPROVAL = {"sqlite": 9, "postgresql": 10}
# The key; the owner; the records as they stand with their projects (the entry rules, and the
# content the approvers review: read once); the person's tags (the rules that cascade through
# tags); the timesheets overlapping the period (one read: the same bounds and the others); the
# new draft (in a savepoint); the administrators, the owner's managers, which candidates are
# active; the event, the timesheet (written once), the pending approvals (stale ones deleted,
# this round's inserted); the journal message and its mention; the approver and the owner for
# the webhook event, the webhooks; the audit row. (Before: 26, the records and the timesheets
# read twice, the timesheet updated twice, the new round's approvals read.)
STATEMENTS_PER_SUBMISSION = {"sqlite": 21, "postgresql": 21}
ADD_WEBHOOK = (
    "mutation($n: String!, $u: String!, $e: [String]!) { addIntegrationWebhook(name: $n, "
    "url: $u, events: $e) { id } }"
)


async def _a_week_to_review(org: Org) -> tuple[Member, Member]:
    """Bob, with two days recorded in the week, and Mia, his manager: the only stage's
    approver."""
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm", "quorum": "any"}])
    await add_record(bob, bob, day=0)
    await add_record(bob, bob, day=1)
    return bob, mia


async def _approval_statements(org: Org) -> tuple[list[str], str]:
    """The statements of one approval (the only stage's) of Bob's timesheet by his manager,
    and the submit event's id."""
    bob, mia = await _a_week_to_review(org)
    submit_id = (await submit(bob, bob))["id"]
    service = org.live.service
    await service.executor.documents.prepare(APPROVE)  # parsed before: one key lookup
    async with statements([service.engine], this_task_only=True) as seen:
        response = await service.executor.run(
            {"query": APPROVE, "variables": {"id": submit_id}}, mia.apikey
        )
    assert response.body["data"]["approveTimesheet"]["status"] == "a", response.body
    return seen.lines(100), submit_id


async def test_one_approval_runs_a_fixed_number_of_statements(org: Org) -> None:
    seen, _ = await _approval_statements(org)
    backend = org.live.service.engine.dialect.name
    assert len(seen) == STATEMENTS_PER_APPROVAL[backend], "\n".join(seen)
    assert not [s for s in seen if s.startswith("SELECT integration_webhooks")], seen


async def test_the_webhook_event_of_an_approval_names_the_owner_and_awaits_no_one(
    org: Org
) -> None:
    """An active webhook (and an inactive one, and one subscribed to something else): the
    approval adds one statement, the delivery's INSERT, and its event is as before."""
    from service.timesheets.models import WebhookDelivery

    for name, events, active in (("all", ["*"], True), ("off", ["*"], False),
                                 ("other", ["journalMessage"], True)):
        await org.admin.gql(ADD_WEBHOOK, {"n": name, "u": "http://127.0.0.1:9/x", "e": events})
        if not active:
            [hook] = [h for h in (await org.admin.gql(
                "{ currentOrganisation { integrations { webhooks { id name } } } }"
            ))["currentOrganisation"]["integrations"]["webhooks"] if h["name"] == name]
            await org.admin.gql(
                "mutation($id: SvcId!) { editIntegrationWebhookActive(id: $id, active: false) "
                "{ id } }", {"id": hook["id"]})
    seen, submit_id = await _approval_statements(org)
    backend = org.live.service.engine.dialect.name
    assert len(seen) == STATEMENTS_PER_APPROVAL[backend] + 1, "\n".join(seen)
    async with org.live.service.sessions() as session:
        bodies = [json.loads(body) for body in await session.scalars(
            select(WebhookDelivery.body).where(WebhookDelivery.organisation_id == org.id))]
    [approved] = [b for b in bodies if b["data"].get("action") == "approved"]
    bob = approved["data"]["person"]
    assert bob["name"] == "Bob" and bob["email"] and bob["id"], approved
    assert approved["data"]["submitId"] == submit_id
    assert approved["data"]["status"] == "a" and approved["data"]["pendingApprovers"] == []
    assert approved["data"]["by"]["name"] == "Mia"


async def test_one_submission_runs_a_fixed_number_of_statements(org: Org) -> None:
    bob, _mia = await _a_week_to_review(org)
    service = org.live.service
    await service.executor.documents.prepare(SUBMIT)
    async with statements([service.engine], this_task_only=True) as seen:
        response = await service.executor.run(
            {"query": SUBMIT, "variables": {"p": bob.id, "s": WEEK, "e": WEEK_END}}, bob.apikey)
    event = response.body["data"]["submitTimesheet"]
    assert (event["status"], event["stage"]) == ("s", 0), response.body
    lines = seen.lines(100)
    backend = service.engine.dialect.name
    assert len(lines) == STATEMENTS_PER_SUBMISSION[backend], "\n".join(lines)
    assert len([s for s in lines if s.startswith("UPDATE timesheets")]) == 1, lines
    assert not [s for s in lines if s.startswith("SELECT approvals")], lines
