"""What one review request asks the service (issue #26: the review fan-out's cost per person),
on SQLite and PostgreSQL: three requests — the approvers' facts of absence with the submit
event and its changes, the approval state with the owner's summary, the approver with their
settings — where there were nine (the facts, the event and its changes apart, the state and
the summary apart, the approver, their autoSubmit and their notification settings apart).
The mail is still the whole review request (tests/mail/outbound/test_reviews.py checks its
content)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from graphql import print_ast

from tests.mail.reviews_support import (
    add_record,
    mails,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    wait_for,
)
from tests.support import Org

# The review path's operations, by name (the rest of the server's traffic is left out).
REVIEW_PATH = {
    "AwayFacts", "ReviewSubmitEvent", "ReviewStateAndSummary", "ReviewApprover",
    "ReviewEvent", "ReviewState", "TimesheetSummary", "SubmitChanges", "ReviewPerson",
    "ReviewPersonAutoSubmit", "PersonNotify",
}


@pytest.fixture
def operations(org: Org) -> Iterator[list[str]]:
    """The names of the operations of the review path sent to the service meanwhile."""
    client = runtime_of(org).client
    sent: list[str] = []
    original = client.execute_raw

    async def execute_raw(query: Any, variables: Any = None, *, apikey: str) -> Any:
        text = query if isinstance(query, str) else print_ast(query.document)
        found = re.search(r"^\s*(?:query|mutation)\s+(\w+)", text)
        if found and found.group(1) in REVIEW_PATH:
            sent.append(found.group(1))
        return await original(query, variables, apikey=apikey)

    client.execute_raw = execute_raw  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        del client.execute_raw


async def test_a_review_request_reads_in_three_requests(org: Org, operations: list[str]
                                                       ) -> None:
    runtime = runtime_of(org)
    owner = await org.add_member("Olive Owner")
    approver = await org.add_member("Ann Approver", "manager")
    await set_stages(org, (approver,))
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner, day=0, hours=3, comment="Kickoff workshop")
    operations.clear()
    await submit(owner)
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, approver.email, "review"), what="review mail")
    [message] = await mails(runtime, approver, "review")
    assert "Olive Owner" in message["Subject"]
    assert sorted(operations) == ["AwayFacts", "ReviewApprover", "ReviewStateAndSummary"
                                  ], operations
