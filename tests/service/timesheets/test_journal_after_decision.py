"""A decision and a Journal message on it in one request (what an approver's reply by mail with
a comment sends): addMessage takes the submission the decision read (RequestContext.decided),
and the message is the same as one added alone — on the timesheet's thread, its
`journalMessage` webhook event naming the submission, the timesheet and the author — after an
approval and after a rejection, by an approver who does not manage the owner too."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.service.test_approvals_support import add_record, manage, set_stages, submit
from tests.service.webhooks.test_webhooks import Receiver, register, until
from tests.support import Member, Org

APPROVE_AND_SAY = (
    "mutation($id: SvcId!, $c: SvcMessageContent!, $r: SvcReferenceInput) { "
    "approveTimesheet(id: $id) { status stage } "
    "addMessage(content: $c, reference: $r) { id reference { id type } author { id } } }"
)
REJECT_AND_SAY = (
    "mutation($id: SvcId!, $c: SvcMessageContent!, $r: SvcReferenceInput) { "
    "rejectTimesheet(id: $id, stage: 0, comment: \"Wrong project\") { status } "
    "addMessage(content: $c, reference: $r) { id reference { id type } author { id } } }"
)
MESSAGES = (
    "query($of: SvcReferenceInput!) { getMessages(of: $of) { id content author { id } } }"
)


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    found = Receiver()
    await found.start()
    try:
        yield found
    finally:
        await found.stop()


async def _submitted(org: Org, approver_manages: bool) -> tuple[Member, Member, str]:
    bob = await org.add_member("Bob")
    mia = await org.add_member("Mia", role="manager")
    if approver_manages:
        await manage(org, mia, bob)
        await set_stages(org, [{"type": "ppm"}])
    else:  # named approver of the stage, not Bob's manager
        await set_stages(org, [{"type": "person", "personIds": [mia.id]}])
    await add_record(bob, bob)
    event = await submit(bob, bob)
    assert event["status"] == "s", event
    return bob, mia, event["submitId"] or event["id"]


@pytest.mark.parametrize("decision,manages", [
    (APPROVE_AND_SAY, True), (REJECT_AND_SAY, True), (APPROVE_AND_SAY, False)])
async def test_a_message_on_the_submission_the_request_decided(
    org: Org, receiver: Receiver, decision: str, manages: bool,
) -> None:
    await register(org, receiver.url, ["journalMessage"])
    bob, mia, submit_id = await _submitted(org, manages)
    reference = {"id": submit_id, "type": "approvalEvent"}
    data = await mia.gql(decision, {"id": submit_id, "c": "Thursday is fine", "r": reference})
    message = data["addMessage"]
    assert message["reference"] == reference and message["author"]["id"] == mia.id
    thread = (await bob.gql(MESSAGES, {"of": reference}))["getMessages"]
    assert [(m["id"], m["content"], m["author"]["id"]) for m in thread
            if m["content"] == "Thursday is fine"] == [(message["id"], "Thursday is fine",
                                                        mia.id)]
    await until(lambda: any(b["event"] == "journalMessage" for b in receiver.accepted()),
                org.live)
    [event] = [b["data"] for b in receiver.accepted() if b["event"] == "journalMessage"]
    assert event["messageId"] == message["id"]
    assert event["approvalEventId"] == submit_id and event["submitId"] == submit_id
    assert event["author"] == {"id": mia.id, "name": "Mia"}
    assert event["content"] == "Thursday is fine" and event["timesheetId"]
