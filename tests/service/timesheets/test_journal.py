"""The Journal through POST /graphql: workflow entries with their stages, timesheet threads,
addMessage, mentions, the cursor and filters, auto-submission and auto-approval."""

from __future__ import annotations

import asyncio

from tests.service.test_approvals_support import (
    WEEK,
    WEEK_END,
    add_project,
    add_record,
    approve,
    manage,
    reject,
    set_stages,
    state,
    submit,
)
from tests.support import DAY_MS, Org

MESSAGE_FIELDS = (
    "id type kind stage content author { id } date { ts } isPinned "
    "reference { id type } mentions { id type } replyTo { id }"
)
JOURNAL = (
    "query($t: SvcTimestamp, $f: [SvcJournalFilter]) { getJournal(timestamp: $t, filter: $f) "
    f"{{ {MESSAGE_FIELDS} }} }}"
)
MESSAGES = (
    "query($of: SvcReferenceInput!, $t: SvcTimestamp) { getMessages(of: $of, timestamp: $t) "
    f"{{ {MESSAGE_FIELDS} }} }}"
)
ADD_MESSAGE = (
    "mutation($a: SvcId, $c: SvcMessageContent!, $r: SvcReferenceInput, $m: [SvcReferenceInput],"
    f" $re: SvcId) {{ addMessage(authorId: $a, content: $c, reference: $r, mentions: $m, "
    f"replyTo: $re) {{ {MESSAGE_FIELDS} }} }}"
)


async def test_workflow_entries_are_in_the_owners_journal(org: Org) -> None:
    bob = await org.add_member("Bob")
    pam = await org.add_member("Pam", role="manager")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    apollo = await add_project(org, "Apollo", managers=(pam,))
    await set_stages(org, [{"type": "pm"}, {"type": "ppm"}])
    await add_record(bob, bob, projects=(apollo,))
    first = (await submit(bob, bob))["id"]
    await approve(pam, first)
    await reject(mia, first, 1, "Friday is missing")
    second = (await submit(bob, bob))["id"]
    await approve(mia, second)

    entries = list(reversed((await bob.gql(JOURNAL))["getJournal"]))
    assert [(e["kind"], e["stage"], e["type"]) for e in entries] == [
        ("Submitted for approval", 0, "timesheetSubmitted"),
        ("Approved by", 0, "timesheetApproved"),
        ("Rejected by", 1, "timesheetRejected"),
        ("Submitted for approval", 0, "timesheetSubmitted"),
        ("Approved by", 0, "timesheetApproved"),  # Pam's approval carried over
        ("Approved by", 1, "timesheetApproved"),
    ]
    assert entries[1]["author"]["id"] == pam.id
    assert entries[2]["content"] == "Rejected by Mia (stage 1: People managers): Friday is missing"
    assert "carried over" in entries[4]["content"]
    assert all({"id": bob.id, "type": "person"} in e["mentions"] for e in entries)
    # The approvers asked see the request in their own journal.
    pams = (await pam.gql(JOURNAL))["getJournal"]
    assert any(e["kind"] == "Submitted for approval" for e in pams)
    # ... and the next stage's approvers see the approval that hands it to them.
    mias = (await mia.gql(JOURNAL))["getJournal"]
    handed = [e for e in mias if e["kind"] == "Approved by" and e["stage"] == 0]
    assert handed and handed[-1]["author"]["id"] == pam.id

    # The timesheet's thread gathers both submissions, and messages added on it.
    note = await pam.gql(ADD_MESSAGE, {"c": "Thanks, looks good now",
                                       "r": {"id": second, "type": "approvalEvent"},
                                       "m": [{"id": bob.id, "type": "person"}]})
    added = note["addMessage"]
    assert added["author"]["id"] == pam.id and added["type"] == "message"
    thread = (await bob.gql(MESSAGES, {"of": {"id": first, "type": "approvalEvent"}}))[
        "getMessages"]
    assert thread[0]["id"] == added["id"]
    assert len(thread) == len(entries) + 1
    assert (await bob.gql(JOURNAL))["getJournal"][0]["id"] == added["id"]
    # Filters and the cursor.
    rejected = await bob.gql(JOURNAL, {"f": [{"type": "timesheetRejected"}]})
    assert [e["kind"] for e in rejected["getJournal"]] == ["Rejected by"]
    found = await bob.gql(JOURNAL, {"f": [{"content": "FRIDAY"}]})
    assert len(found["getJournal"]) == 1
    message = await bob.gql.error(JOURNAL, {"f": [{"tagId": "0" * 24}]})
    assert message.startswith('Invalid argument "filter[0].tagId"')
    oldest = entries[0]["date"]["ts"]
    assert (await bob.gql(JOURNAL, {"t": oldest}))["getJournal"] == []


async def test_threads_are_only_for_those_who_may_see_the_timesheet(org: Org) -> None:
    bob = await org.add_member("Bob")
    eve = await org.add_member("Eve")
    await add_record(bob, bob)
    submit_id = (await submit(bob, bob))["id"]
    reference = {"id": submit_id, "type": "approvalEvent"}
    assert await eve.gql.denied(MESSAGES, {"of": reference}) == ["Query.getMessages"]
    assert await eve.gql.denied(ADD_MESSAGE, {"c": "hi", "r": reference}) == [
        "Mutation.addMessage"
    ]
    assert await eve.gql.denied(ADD_MESSAGE, {"c": "as Bob", "a": bob.id}) == [
        "Mutation.addMessage"
    ]
    message = await bob.gql.error(ADD_MESSAGE, {"c": "x", "r": {"id": "0" * 24,
                                                                 "type": "approvalEvent"}})
    assert message.startswith('Invalid argument "reference.id"')
    message = await bob.gql.error(ADD_MESSAGE, {"c": "x", "r": {"id": bob.id, "type": "boat"}})
    assert "SvcType" in message
    assert "SvcMessageContent" in await bob.gql.error(ADD_MESSAGE, {"c": "  "})
    # A reply stays in its thread; an admin may write as someone else.
    root = (await bob.gql(ADD_MESSAGE, {"c": "Question", "r": reference}))["addMessage"]
    reply = await org.admin.gql(ADD_MESSAGE, {"c": "Answer", "re": root["id"], "a": eve.id})
    assert reply["addMessage"]["replyTo"]["id"] == root["id"]
    assert reply["addMessage"]["reference"] == reference
    assert reply["addMessage"]["author"]["id"] == eve.id
    thread = (await bob.gql(MESSAGES, {"of": reference}))["getMessages"]
    assert [m["content"] for m in thread[:2]] == ["Answer", "Question"]
    # Auto-approved (no workflow) is an entry too.
    assert [e["kind"] for e in thread[2:]] == ["Auto-approved", "Submitted for approval"]
    assert (await eve.gql(JOURNAL))["getJournal"][0]["content"] == "Answer"


async def test_auto_submission(org: Org) -> None:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    await manage(org, mia, bob)
    await set_stages(org, [{"type": "ppm"}])
    org.live.clock.set(WEEK + DAY_MS)
    await add_record(bob, bob)
    await org.admin.gql(
        "mutation($id: SvcId!) { editPersonTimeSettingsAutoSubmit(id: $id, autoSubmit: 2) "
        "{ timeSettings { autoSubmit { value path { collection } } } } }", {"id": bob.id},
    )
    assert "autoSubmit" in await org.admin.gql.error(
        "mutation { editOrganisationTimeSettingsAutoSubmit(autoSubmit: -1) { id } }"
    )
    org.live.clock.set(WEEK_END + DAY_MS)  # one day after the week: not yet
    org.live.service.webhooks.kick()
    await asyncio.sleep(0.3)
    assert (await state(bob, bob))["status"] == "d"
    org.live.clock.set(WEEK_END + 2 * DAY_MS)
    for _ in range(100):
        org.live.service.webhooks.kick()
        await asyncio.sleep(0.05)
        if (await state(bob, bob))["status"] == "s":
            break
    current = await state(bob, bob)
    assert current["status"] == "s" and current["by"] is None
    entries = (await bob.gql(JOURNAL))["getJournal"]
    assert [(e["kind"], e["stage"], e["author"]) for e in entries] == [
        ("Auto-submitted", 0, None)
    ]
